import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildProgram, createCalvinCoreServices, MAX_FILE_BYTES, programOf, toProgramModel } from '@calvin/language';
import { inferAnnotations, placeLines, verifyWithInference, withAnnotations, type InferredAnnotation } from '@calvin/verifier';
import { collectFiles, readSource } from './files.js';
import { warn } from './format.js';
import { commandBackend, type VerifyStepOptions } from './verify-step.js';

/**
 * `calvin infer FILE...`: the protection Calvin infers for the programs (the
 * `writable_if` and `environment` clauses they leave out), inserted into the
 * files so that it can be reviewed and committed. By default the checker
 * verifies the program with them first, and only what it proved is printed:
 * the inserted text then verifies without inference (`calvin check
 * --no-infer`) with the same verdicts.
 */

export interface InferCliOptions {
    write: boolean;
    format: 'text' | 'json';
    /** Verify the inferred annotations before printing them (default true). */
    verify: boolean;
    verifier: VerifyStepOptions;
}

export interface InferOutcome {
    /** What to print on stdout. */
    out: string;
    /** Files with front-end errors (nothing inferred for their programs). */
    failed: string[];
    files: number;
}

export async function inferFiles(args: string[], options: InferCliOptions): Promise<InferOutcome> {
    const { files, skipped } = collectFiles(args);
    for (const s of skipped) warn(`skipped '${s.path}': ${s.why}`);
    const sources = files.map(f => ({ file: f, uri: pathToFileURL(path.resolve(f)).toString(), ...readSource(f, MAX_FILE_BYTES) }));
    const byUri = new Map(sources.map(s => [s.uri, s]));
    const { shared, Calvin } = createCalvinCoreServices();
    const result = await buildProgram(shared, sources.filter(s => s.tooLarge === undefined).map(s => ({ uri: s.uri, text: s.text })));
    const failed: string[] = sources.filter(s => s.tooLarge !== undefined).map(s => s.file);
    const all = [...shared.workspace.LangiumDocuments.all];
    const annotations = new Map<string, InferredAnnotation[]>(sources.map(s => [s.uri, []]));
    const done = new Set<string>();
    const backend = options.verify ? commandBackend(options.verifier) : undefined;
    try {
        for (const doc of result.documents) {
            if (done.has(doc.uri.toString())) continue;
            const group = programOf(doc, all);
            group.forEach(d => done.add(d.uri.toString()));
            const errors = group.filter(d => (d.diagnostics ?? []).some(x => (x.severity ?? 1) === 1));
            if (errors.length > 0) {
                for (const d of errors) {
                    const file = byUri.get(d.uri.toString())?.file ?? d.uri.toString();
                    failed.push(file);
                    warn(`${file}: not inferred (fix the errors 'calvin check' reports first)`);
                }
                continue;
            }
            const model = toProgramModel(group, Calvin.types.TypeSystem);
            const inferred = backend
                ? (await verifyWithInference(model, { solver: backend, timeLimitMs: options.verifier.timeLimitMs, resourceLimit: options.verifier.resourceLimit, concurrency: options.verifier.jobs + 1, log: options.verifier.log })).inference.annotations
                : inferAnnotations(model).annotations;
            for (const a of inferred) annotations.get(a.before.file)?.push(a);
        }
    } finally {
        backend?.dispose().catch(() => undefined);
    }
    const relevant = sources.filter(s => s.tooLarge === undefined && !failed.includes(s.file));
    if (options.format === 'json') {
        const json = {
            files: relevant.map(s => ({
                file: s.file,
                annotations: (annotations.get(s.uri) ?? []).map(a => ({
                    kind: a.kind, field: a.field, text: a.text, line: a.before.startLine + 1, column: a.before.startChar + 1, origin: placeLines(a.origin, a.before.file),
                })),
            })),
        };
        if (options.write) for (const s of relevant) writeFile(s, annotations.get(s.uri) ?? []);
        return { out: `${JSON.stringify(json, null, 2)}\n`, failed, files: files.length };
    }
    const parts: string[] = [];
    for (const s of relevant) {
        const list = annotations.get(s.uri) ?? [];
        if (options.write) {
            writeFile(s, list);
            parts.push(`${s.file}: ${list.length} annotation${list.length === 1 ? '' : 's'} inserted\n`);
            continue;
        }
        const text = withAnnotations(s.text, list);
        parts.push(relevant.length > 1 ? `==> ${s.file} <==\n${text}${text.endsWith('\n') ? '' : '\n'}` : text);
    }
    return { out: parts.join(relevant.length > 1 && !options.write ? '\n' : ''), failed, files: files.length };
}

function writeFile(s: { file: string; text: string }, list: InferredAnnotation[]): void {
    if (list.length === 0) return;
    // written next to the file, then renamed over it: an interrupted run leaves the file as it was
    const tmp = path.join(path.dirname(s.file), `.${path.basename(s.file)}.calvin-infer~`);
    fs.writeFileSync(tmp, withAnnotations(s.text, list), { flag: 'wx' });
    fs.renameSync(tmp, s.file);
}
