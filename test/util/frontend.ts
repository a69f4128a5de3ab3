import { pathToFileURL } from 'node:url';
import * as path from 'node:path';
import { buildProgram, createCalvinCoreServices } from '../../language/src/index.js';

/** A front-end diagnostic, 1-based, as tests compare them. */
export interface Diag {
    line: number;
    column: number;
    endLine: number;
    endColumn: number;
    code: string;
    severity: number;
    message: string;
}

/** Parse, link and validate sources (file name → text) as one workspace; diagnostics per file. */
export async function frontEnd(files: Record<string, string>): Promise<Record<string, Diag[]>> {
    const { shared } = createCalvinCoreServices();
    const entries = Object.entries(files).map(([name, text]) => ({ name, uri: pathToFileURL(path.resolve('/virtual', name)).toString(), text }));
    const result = await buildProgram(shared, entries.map(e => ({ uri: e.uri, text: e.text })));
    const out: Record<string, Diag[]> = {};
    for (const e of entries) {
        out[e.name] = (result.diagnostics.get(e.uri) ?? []).map(d => ({
            line: d.range.start.line + 1, column: d.range.start.character + 1,
            endLine: d.range.end.line + 1, endColumn: d.range.end.character + 1,
            code: String(d.code), severity: d.severity ?? 1, message: String(d.message),
        }));
    }
    return out;
}

/** Diagnostics of a single file. */
export async function diagnosticsOf(text: string): Promise<Diag[]> {
    return (await frontEnd({ 'test.calvin': text }))['test.calvin'];
}
