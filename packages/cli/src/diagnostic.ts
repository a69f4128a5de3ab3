/** A diagnostic as the CLI reports it (checking.md, "Command-line output"): 1-based lines and columns. */
export interface CliDiagnostic {
    file: string;
    line: number;
    column: number;
    endLine: number;
    endColumn: number;
    severity: 'error' | 'warning' | 'info';
    code: string;
    message: string;
    /** Related locations: the annotation involved, the call chain into an inlined body. */
    related?: Array<{ file: string; line: number; column: number; message: string }>;
    /** For an error of the verifier: a concrete interleaving that reaches it, or why none was found within the bounds (issue 14). */
    witness?: {
        status: 'confirmed' | 'not-confirmed';
        bounds: { loops: number; switches: number; copies: number; inlineDepth: number };
        summary?: string;
        reason?: string;
        steps: Array<{ thread: string; file: string; line: number; column: number; action: string; values: string; failing?: boolean }>;
    };
}

export interface CheckReport {
    files: number;
    procedures: number;
    diagnostics: CliDiagnostic[];
    timeMs: number;
    /** With --verbose: every check with its status and time. */
    checks?: import('./verify-step.js').CheckSummary[];
}

export function compareDiagnostics(a: CliDiagnostic, b: CliDiagnostic): number {
    return a.file.localeCompare(b.file) || a.line - b.line || a.column - b.column || a.code.localeCompare(b.code);
}
