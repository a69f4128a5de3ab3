// Typing in the language server (issue 15's incremental front end), end to
// end: the bundled server over stdio and a real LSP client. Random edits
// inside method and thread bodies (that parse, so that most take the
// incremental path) arrive as a user types them — some in
// bursts faster than the server's debounce and builds, some after the
// diagnostics of the previous one; whenever the diagnostics are waited for,
// they must be exactly those of a fresh front-end build of the text (the
// incremental updates, the cancelled and the uninterrupted builds leave
// nothing stale).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { buildProgram, createCalvinCoreServices } from '../../language/src/index.js';
import type * as ast from '../../language/src/generated/ast.js';
import { mulberry32 } from '../fuzz/mutate.js';
import { randomBodyEdit } from '../util/body-edits.js';
import { diagnosticsOf, type Diag } from '../util/frontend.js';
import { EXAMPLES, ROOT } from '../util/paths.js';
import { fileUri, LspClient } from '../util/lsp-client.js';

const PROGRAMS = [
    path.join(EXAMPLES, 'vector_ok.calvin'),
    path.join(EXAMPLES, 'producer_consumer_ok.calvin'),
    path.join(ROOT, 'test/corpus/textbook_bounded_buffer_ok.calvin'),
];
const EDITS = 30;

async function programOf(text: string): Promise<ast.Program> {
    const { shared } = createCalvinCoreServices();
    const result = await buildProgram(shared, [{ uri: 'file:///typing/parse.calvin', text }]);
    return result.documents[0].parseResult.value as ast.Program;
}

function published(diagnostics: Array<{ range: { start: { line: number; character: number }; end: { line: number; character: number } }; code?: string | number; severity?: number; message: string }>): Diag[] {
    return diagnostics.map(d => ({
        line: d.range.start.line + 1, column: d.range.start.character + 1,
        endLine: d.range.end.line + 1, endColumn: d.range.end.character + 1,
        code: String(d.code), severity: d.severity ?? 1, message: String(d.message),
    }));
}

describe('language server: typing in bodies', () => {
    let dir: string;
    let client: LspClient;
    before(async () => {
        dir = fs.mkdtempSync(path.join(os.tmpdir(), 'calvin-typing-'));
        client = await LspClient.start({ rootPath: dir });
    });
    after(async () => {
        await client?.shutdown().catch(() => client.kill());
        fs.rmSync(dir, { recursive: true, force: true });
    });

    for (const [p, file] of PROGRAMS.entries()) {
        it(`${path.basename(file)}: ${EDITS} edits, some in bursts: the diagnostics of the text whenever they are waited for`, async () => {
            let text = fs.readFileSync(file, 'utf8');
            const target = path.join(dir, path.basename(file));
            fs.writeFileSync(target, text);
            const uri = fileUri(target);
            await client.open(uri, text, 1);
            await client.waitForDiagnostics(uri, () => true, 30_000);
            const rnd = mulberry32(4242 + p);
            let version = 1;
            for (let k = 0; k < EDITS; k++) {
                const next = randomBodyEdit(text, await programOf(text), rnd, k, { syntaxErrors: false });
                if (next === undefined) break;
                text = next;
                const before = client.published.length;
                await client.change(uri, text, ++version);
                if (k % 3 === 2 || k === EDITS - 1) {
                    // every third edit waits for the diagnostics, which must be those of the text
                    await client.until(() => client.published.slice(before).some(x => x.uri === uri), 30_000);
                    const last = await client.settled(uri, 200, 30_000);
                    assert.ok(last, 'diagnostics were published');
                    assert.deepEqual(published(last.diagnostics), await diagnosticsOf(text), `after edit ${k + 1}`);
                } else {
                    // the others come in a burst (faster than the debounce, or than a build)
                    await new Promise(r => setTimeout(r, Math.floor(rnd() * 40)));
                }
            }
            assert.ok(client.alive(), 'the server is alive');
        });
    }
});
