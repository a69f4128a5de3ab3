// Diagnostics as comparable keys, from the CLI's JSON and from a language
// client's last publications: "file:line:col-endLine:endCol code severity".
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import type * as lsp from 'vscode-languageserver-protocol';
import { CLI } from './paths.js';
import type { LspClient } from './lsp-client.js';

const SEVERITY: Record<string, number> = { error: 1, warning: 2, info: 3 };

function key(file: string, line: number, col: number, endLine: number, endCol: number, code: string, severity: number): string {
    return `${path.basename(file)}:${line}:${col}-${endLine}:${endCol} ${code} ${severity}`;
}

export interface CliRun {
    /** Sorted keys of every diagnostic. */
    keys: string[];
    diagnostics: Array<{ file: string; line: number; column: number; endLine: number; endColumn: number; severity: string; code: string; message: string }>;
}

/** `calvin check --format json DIR` in a fresh process. */
export function cliDiagnostics(dir: string): CliRun {
    const cli = spawnSync(process.execPath, [CLI, 'check', '--no-witness', '--format', 'json', dir], { encoding: 'utf8', maxBuffer: 64 << 20 });
    if (cli.status !== 0 && cli.status !== 1) throw new Error(`calvin check failed: ${cli.stderr}`);
    const { diagnostics } = JSON.parse(cli.stdout) as Pick<CliRun, 'diagnostics'>;
    return { diagnostics, keys: diagnostics.map(d => key(d.file, d.line, d.column, d.endLine, d.endColumn, d.code, SEVERITY[d.severity])).sort() };
}

/** Sorted keys of the diagnostics last published for these files (name → uri). */
export function publishedKeys(client: LspClient, uris: ReadonlyMap<string, string>): string[] {
    return [...uris].flatMap(([name, uri]) => (client.latest.get(uri)?.diagnostics ?? []).map((d: lsp.Diagnostic) =>
        key(name, d.range.start.line + 1, d.range.start.character + 1, d.range.end.line + 1, d.range.end.character + 1, String(d.code), d.severity ?? 1))).sort();
}
