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
