// Rename (language server, over stdio): a new name already declared where the
// renamed declaration is would give the program a duplicate-name error; the
// server refuses it with a message, as it refuses keywords.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type * as lsp from 'vscode-languageserver-protocol';
import { fileUri, LspClient } from '../util/lsp-client.js';

const A = [
    'class C {',                                   // 0
    '  int f = 0;',                                // 1
    '  //@ ghost int g = 0;',                      // 2
    '  void m(int a, int b) {',                    // 3
    '    int c = a;',                              // 4
    '    { int d = b; }',                          // 5
    '    { int e = c; }',                          // 6
    '    //@ assert (\\forall int j; j >= 0 ==> j + c >= c);',   // 7
    '  }',                                         // 8
    '}',                                           // 9
    'int x = 0;',                                  // 10
    'thread T { int u = 1; if (u > 0) { int v = u; x = v; } }',  // 11
].join('\n') + '\n';
const B = 'thread U { x = 2; }\n';

function at(text: string, line: number, token: string, nth = 0): lsp.Position {
    const l = text.split('\n')[line];
    let i = -1;
    for (let k = 0; k <= nth; k++) i = l.indexOf(token, i + 1);
    assert.ok(i >= 0, `'${token}' not on line ${line}`);
    return { line, character: i };
}

describe('rename refuses a name already declared in the same scope', () => {
    let dir: string;
    let client: LspClient;
    let aUri: string;
    let bUri: string;

    before(async () => {
        dir = fs.mkdtempSync(path.join(os.tmpdir(), 'calvin-rename-'));
        fs.writeFileSync(path.join(dir, 'a.calvin'), A);
        fs.writeFileSync(path.join(dir, 'b.calvin'), B);
        aUri = fileUri(path.join(dir, 'a.calvin'));
        bUri = fileUri(path.join(dir, 'b.calvin'));
        client = await LspClient.start({ rootPath: dir });
        const published = [client.waitForVersion(aUri, 1), client.waitForVersion(bUri, 1)];
        await client.open(aUri, A);
        await client.open(bUri, B);
        for (const p of await Promise.all(published)) assert.deepEqual(p.diagnostics, [], `${p.uri} has no diagnostics`);
    });

    after(async () => {
        await client?.shutdown();
        if (dir) fs.rmSync(dir, { recursive: true, force: true });
    });

    const rename = (uri: string, position: lsp.Position, newName: string) =>
        client.request<lsp.WorkspaceEdit | null>('textDocument/rename', { textDocument: { uri }, position, newName }).catch((e: Error) => e);

    const refused: Array<[string, string, lsp.Position, string, RegExp]> = [
        ['a field to another member of its class', 'a', at(A, 1, 'f'), 'm', /^request textDocument\/rename failed: -32602 'm' is already declared in the same scope at line 4; renaming 'f' to it would declare it twice/],
        ['a field to a ghost field of its class', 'a', at(A, 1, 'f'), 'g', /'g' is already declared in the same scope at line 3/],
        ['a ghost field to a field of its class', 'a', at(A, 2, 'g ='), 'f', /'f' is already declared in the same scope at line 2/],
        ['a global to a class', 'a', at(A, 10, 'x'), 'C', /'C' is already declared in the same scope at line 1/],
        ['a global to a thread of another file of the program', 'a', at(A, 10, 'x'), 'U', /'U' is already declared in the same scope in b\.calvin at line 1/],
        ['a thread, at a use in another file, to a global', 'b', at(B, 0, 'U'), 'x', /'x' is already declared in the same scope in a\.calvin at line 11; renaming 'U' to it/],
        ['a global at its use in another file to a thread', 'b', at(B, 0, 'x'), 'T', /'T' is already declared in the same scope in a\.calvin at line 12; renaming 'x' to it/],
        ['a parameter to another parameter', 'a', at(A, 3, 'a'), 'b', /'b' is already declared in the same scope at line 4/],
        ['a parameter to a local of the body', 'a', at(A, 3, 'a'), 'd', /'d' is already declared in the same scope at line 6/],
        ['a local to a parameter', 'a', at(A, 4, 'c'), 'a', /'a' is already declared in the same scope at line 4/],
        ['a local in a nested block to a local of the enclosing block', 'a', at(A, 5, 'd'), 'c', /'c' is already declared in the same scope at line 5/],
        ['a local to one declared later inside its scope', 'a', at(A, 4, 'c'), 'e', /'e' is already declared in the same scope at line 7/],
        ['a local to a quantified variable in its scope', 'a', at(A, 4, 'c'), 'j', /'j' is already declared in the same scope at line 8/],
        ['a quantified variable to a local', 'a', at(A, 7, 'j'), 'c', /'c' is already declared in the same scope at line 5/],
        ['a thread local to one of its enclosing block', 'a', at(A, 11, 'v'), 'u', /'u' is already declared in the same scope at line 12/],
    ];
    for (const [what, file, position, newName, message] of refused) {
        it(`${what} ('${newName}')`, async () => {
            const r = await rename(file === 'a' ? aUri : bUri, position, newName);
            assert.ok(r instanceof Error, `accepted: ${JSON.stringify(r)}`);
            assert.match(r.message, message);
        });
    }

    const accepted: Array<[string, lsp.Position, string, number]> = [
        ['a field to the name of a global (another scope)', at(A, 1, 'f'), 'x', 1],
        ['a local to the name of a local in a sibling block', at(A, 5, 'd'), 'e', 1],
        ['a local to the name of a field (it may hide it, as in Java)', at(A, 4, 'c'), 'f', 4],
        ['a declaration to its own name', at(A, 3, 'a'), 'a', 2],
    ];
    for (const [what, position, newName, count] of accepted) {
        it(`${what} is accepted`, async () => {
            const r = await rename(aUri, position, newName);
            assert.ok(!(r instanceof Error), `refused: ${r instanceof Error ? r.message : ''}`);
            assert.equal(r?.changes?.[aUri]?.length, count, JSON.stringify(r));
        });
    }
});
