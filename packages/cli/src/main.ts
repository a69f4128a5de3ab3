import * as os from 'node:os';
import { Command, InvalidArgumentError, Option } from 'commander';
import { awaitPrefetchedZ3Version, oneLine, resolveSolver, SOLVER_CHOICES, SolverFailure, type SolverChoice } from '@calvin/verifier';
import { check } from './check.js';
import { inferFiles } from './infer.js';
import { formatJson, formatSarif, formatText, printable, warn, type Format } from './format.js';
import { UsageError } from './files.js';
import { QUICK_WASM_FLAGS, quickWasmFlags } from './quick-wasm.js';

declare const CALVIN_VERSION: string;
const version = typeof CALVIN_VERSION === 'string' ? CALVIN_VERSION : '0.0.0-dev';

const program = new Command();
program
    .name('calvin')
    .description('Calvin: modular checking of multithreaded programs (races, assertions, invariants, abstractions).')
    .version(version, '-v, --version')
    // Its messages quote the arguments given (file names): printable, like ours.
    .configureOutput({ writeErr: text => process.stderr.write(printableLines(text)) })
    .exitOverride(err => {
        // --help and --version exit 0; bad arguments exit 2 (checking.md).
        process.exit(err.exitCode === 0 ? 0 : 2);
    });

program
    .command('check')
    .description('check .calvin files and directories; exit 0 when there is no error, 1 when there is, 2 when the command cannot run')
    .addOption(new Option('-f, --format <format>', 'output format').choices(['text', 'json', 'sarif']).default('text'))
    .addOption(solverOption())
    .addOption(z3PathOption())
    .addOption(new Option('--time-limit <ms>', 'hard time limit per solver query, in milliseconds').default('10000').argParser(positiveInt('--time-limit')))
    .addOption(new Option('--resource-limit <n>', "Z3's resource limit per query (deterministic, unlike time: the same query gives up at the same point on any machine)").argParser(positiveInt('--resource-limit')))
    .addOption(jobsOption())
    .option('--dump-smt <dir>', 'write every solver query as SMT-LIB2 into this directory (for debugging)')
    .option('--verbose', 'list every check (thread, abstraction, initialization) with its status and time')
    .option('--no-verify', 'run the front end only (syntax, names, types)')
    .option('--no-infer', 'do not infer the protection (writable_if, environment) the programs leave out: check them as written')
    .option('--no-witness', 'do not search a concrete interleaving for each error')
    .addOption(new Option('--witness-bounds <loops,switches,copies>', 'bounds of the witness search: loop iterations, context switches, copies of each replicated thread (without this option, loops cut at 3 iterations are searched again with 6 and 9)').default('3,3,2').argParser(boundsArg))
    .argument('<files...>', 'files or directories (searched recursively for .calvin files)')
    .action(async (files: string[], options: CheckCliOptions, command: Command) => {
        finishing = true;
        try {
            const debug = options.verbose === true || !!process.env.CALVIN_DEBUG;
            const solver = options.verify ? await commandSolver(options.solver, options.z3Path) : undefined;
            if (solver && debug) process.stderr.write(`calvin: solver: ${printableLines(solver.description)}${solver.kind === 'z3-wasm' && quickWasmFlags() ? `; V8 ${QUICK_WASM_FLAGS.join(' ')} (launch.ts)` : ''}\n`);
            const { skipped, checked, notChecked, ...report } = await check(files, {
                verify: options.verify,
                verbose: options.verbose === true,
                verifier: {
                    solver: solver?.kind ?? 'z3-wasm', z3Path: solver?.z3Path, timeLimitMs: Number(options.timeLimit), jobs: jobsWithin(Number(options.jobs)), dumpSmtDir: options.dumpSmt, infer: options.infer,
                    // (bounds given on the command line are kept; with the default ones, a loop cut at its bound is searched further)
                    witness: options.witness ? { bounds: command.getOptionValueSource('witnessBounds') === 'cli' ? parseBounds(options.witnessBounds) : undefined } : undefined,
                    resourceLimit: options.resourceLimit !== undefined ? Number(options.resourceLimit) : undefined,
                    log: debug ? m => process.stderr.write(`calvin: ${printableLines(m)}\n`) : undefined,
                    trace: process.env.CALVIN_DEBUG ? m => process.stderr.write(`[${performance.now().toFixed(0)} ms] ${printableLines(m)}\n`) : undefined,
                },
            });
            const out = options.format === 'json' ? formatJson(report)
                : options.format === 'sarif' ? formatSarif(report, version)
                    : formatText(report);
            if (skipped.length > 0) warn(`not verified (fix the errors reported first): ${skipped.join(', ')}`);
            // 2 when nothing could be checked at all; an unfinished check is an error diagnostic (exit 1)
            const nothing = options.verify && notChecked > 0 && checked === 0;
            if (nothing) warn(`nothing could be checked (${notChecked} check${notChecked === 1 ? '' : 's'} could not run; see the diagnostics)`);
            const code = nothing ? 2 : report.diagnostics.some(d => d.severity === 'error') ? 1 : 0;
            done = true;
            process.stdout.write(out, () => process.exit(code));
        } catch (e) {
            done = true;
            if (e instanceof UsageError) {
                warn(e.message);
            } else if (e instanceof SolverFailure) {
                warn(`the solver cannot run: ${e.message}`);
            } else {
                warn(`internal error: ${oneLine(e)}${process.env.CALVIN_DEBUG ? '' : ' (set CALVIN_DEBUG=1 for details)'}`);
                if (process.env.CALVIN_DEBUG) process.stderr.write(`${printableLines(String((e as Error)?.stack))}\n`);
            }
            process.exit(2);
        }
    });

/** The solver of a verifying command, with the answer of a `z3 --version` the launcher started (launch.ts). */
async function commandSolver(choice: SolverChoice, z3Path: string | undefined): Promise<ReturnType<typeof resolveSolver>> {
    if (await awaitPrefetchedZ3Version(z3Path) && process.env.CALVIN_DEBUG) process.stderr.write('calvin: z3 --version: the answer of the run started at launch\n');
    return resolveSolver(choice, z3Path);
}

/**
 * No silent exit: if Node runs out of work while a command is still
 * unfinished (a promise that never settles), say so and exit 2.
 */
let finishing = false;
let done = false;
process.on('beforeExit', () => {
    if (!finishing || done) return;
    done = true;
    warn('internal error: the check stopped before it finished (nothing was reported); please report it');
    process.exit(2);
});

interface CheckCliOptions {
    format: Format;
    solver: SolverChoice;
    z3Path?: string;
    timeLimit: string;
    resourceLimit?: string;
    jobs: string;
    dumpSmt?: string;
    verbose?: boolean;
    verify: boolean;
    infer: boolean;
    witness: boolean;
    witnessBounds: string;
}

function boundsArg(value: string): string {
    if (!/^[1-9][0-9]?,[0-9]{1,2},[1-9][0-9]?$/.test(value)) throw new InvalidArgumentError(`--witness-bounds takes loops,switches,copies, three small numbers (got '${value}')`);
    return value;
}

function parseBounds(value: string): { loops: number; switches: number; copies: number } {
    const [loops, switches, copies] = value.split(',').map(Number);
    return { loops, switches, copies };
}

// ---------------------------------------------------------------- solver and jobs (issue 15)

/** --solver: auto (a native z3 >= 4.8 when there is one, else WebAssembly), wasm or native. */
function solverOption(): Option {
    return new Option('--solver <solver>', 'solver backend: auto (a native z3 4.8 or later on PATH or at --z3-path, else Z3 in WebAssembly), wasm or native; z3-wasm and z3-native are accepted too')
        .choices([...SOLVER_CHOICES]).default('auto');
}

function z3PathOption(): Option {
    return new Option('--z3-path <file>', 'the native z3 executable to use (default: z3 on PATH)');
}

/** --jobs: by default every core of the machine (each job is a solver instance). */
function jobsOption(): Option {
    return new Option('-j, --jobs <n>', 'solver instances working in parallel (default: the cores available)')
        .default(String(Math.max(1, os.availableParallelism()))).argParser(positiveInt('--jobs'));
}

/**
 * --jobs beyond the cores available only costs memory (each solver instance
 * holds a Z3 context of its own): it is clamped, with a warning.
 */
function jobsWithin(jobs: number): number {
    const cores = Math.max(1, os.availableParallelism());
    if (jobs <= cores) return jobs;
    warn(`--jobs ${jobs} is more than the ${cores} core${cores === 1 ? '' : 's'} available: using ${cores}`);
    return cores;
}

/** Debugging output over several lines (stack traces): each line printable. */
function printableLines(text: string): string {
    return text.split('\n').map(printable).join('\n');
}

function positiveInt(flag: string): (value: string) => string {
    return value => {
        if (!/^[1-9][0-9]*$/.test(value)) throw new InvalidArgumentError(`${flag} takes a positive integer (got '${value}')`);
        return value;
    };
}

program
    .command('infer')
    .description('print the files with the protection Calvin infers (writable_if, environment) inserted, after the checker verified it; exit 0, or 1 when a file has front-end errors')
    .addOption(new Option('-f, --format <format>', 'output format: the files with the annotations inserted, or a JSON list of them').choices(['text', 'json']).default('text'))
    .option('--write', 'insert the annotations into the files in place')
    .option('--no-verify', 'print what the inference proposes without verifying it first')
    .addOption(solverOption())
    .addOption(z3PathOption())
    .addOption(new Option('--time-limit <ms>', 'hard time limit per solver query, in milliseconds').default('10000').argParser(positiveInt('--time-limit')))
    .addOption(jobsOption())
    .argument('<files...>', 'files or directories (searched recursively for .calvin files)')
    .action(async (files: string[], options: { format: 'text' | 'json'; write?: boolean; verify: boolean; solver: SolverChoice; z3Path?: string; timeLimit: string; jobs: string }) => {
        finishing = true;
        try {
            const solver = options.verify ? await commandSolver(options.solver, options.z3Path) : undefined;
            const r = await inferFiles(files, {
                write: options.write === true, format: options.format, verify: options.verify,
                verifier: { solver: solver?.kind ?? 'z3-wasm', z3Path: solver?.z3Path, timeLimitMs: Number(options.timeLimit), jobs: jobsWithin(Number(options.jobs)), infer: true },
            });
            done = true;
            process.stdout.write(r.out, () => process.exit(r.failed.length > 0 ? 1 : 0));
        } catch (e) {
            done = true;
            if (e instanceof UsageError) warn(e.message);
            else if (e instanceof SolverFailure) warn(`the solver cannot run: ${e.message}`);
            else warn(`internal error: ${oneLine(e)}`);
            process.exit(2);
        }
    });

program
    .command('lsp')
    .description('run the Calvin language server over stdio (for any LSP editor)')
    .option('--stdio', 'use stdio (the default; accepted for compatibility with editors that pass it)')
    .action(async () => {
        const { startServer } = await import('@calvin/server');
        startServer();
    });

program.parseAsync(process.argv).catch(e => {
    warn(`internal error: ${oneLine(e)}`);
    process.exit(2);
});
