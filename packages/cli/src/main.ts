import * as os from 'node:os';
import { Command, InvalidArgumentError, Option } from 'commander';
import { SolverFailure } from '@calvin/verifier';
import { check } from './check.js';
import { formatJson, formatSarif, formatText, type Format } from './format.js';
import { UsageError } from './files.js';

declare const CALVIN_VERSION: string;
const version = typeof CALVIN_VERSION === 'string' ? CALVIN_VERSION : '0.0.0-dev';

const program = new Command();
program
    .name('calvin')
    .description('Calvin: modular checking of multithreaded programs (races, assertions, invariants, abstractions).')
    .version(version, '-v, --version')
    .exitOverride(err => {
        // --help and --version exit 0; bad arguments exit 2 (checking.md).
        process.exit(err.exitCode === 0 ? 0 : 2);
    });

program
    .command('check')
    .description('check .calvin files and directories; exit 0 when there is no error, 1 when there is, 2 when the command cannot run')
    .addOption(new Option('-f, --format <format>', 'output format').choices(['text', 'json', 'sarif']).default('text'))
    .addOption(new Option('--solver <solver>', 'solver backend: Z3 in WebAssembly (no install needed) or a native z3 on PATH').choices(['z3-wasm', 'z3-native']).default('z3-wasm'))
    .addOption(new Option('--time-limit <ms>', 'hard time limit per solver query, in milliseconds').default('10000').argParser(positiveInt('--time-limit')))
    .addOption(new Option('-j, --jobs <n>', 'solver instances working in parallel').default(String(Math.max(1, Math.min(4, os.availableParallelism() - 1)))).argParser(positiveInt('--jobs')))
    .option('--dump-smt <dir>', 'write every solver query as SMT-LIB2 into this directory (for debugging)')
    .option('--verbose', 'list every check (thread, abstraction, initialization) with its status and time')
    .option('--no-verify', 'run the front end only (syntax, names, types)')
    .argument('<files...>', 'files or directories (searched recursively for .calvin files)')
    .action(async (files: string[], options: CheckCliOptions) => {
        try {
            const { skipped, ...report } = await check(files, {
                verify: options.verify,
                verbose: options.verbose === true,
                verifier: { solver: options.solver, timeLimitMs: Number(options.timeLimit), jobs: Number(options.jobs), dumpSmtDir: options.dumpSmt },
            });
            const out = options.format === 'json' ? formatJson(report)
                : options.format === 'sarif' ? formatSarif(report, version)
                    : formatText(report);
            if (skipped.length > 0) {
                process.stderr.write(`calvin: not verified (fix the errors reported first): ${skipped.join(', ')}\n`);
            }
            process.stdout.write(out, () => process.exit(report.diagnostics.some(d => d.severity === 'error') ? 1 : 0));
        } catch (e) {
            if (e instanceof UsageError) {
                process.stderr.write(`calvin: ${e.message}\n`);
            } else if (e instanceof SolverFailure) {
                process.stderr.write(`calvin: the solver cannot run: ${e.message}\n`);
            } else {
                process.stderr.write(`calvin: internal error: ${(e as Error)?.stack ?? e}\n`);
            }
            process.exit(2);
        }
    });

interface CheckCliOptions {
    format: Format;
    solver: 'z3-wasm' | 'z3-native';
    timeLimit: string;
    jobs: string;
    dumpSmt?: string;
    verbose?: boolean;
    verify: boolean;
}

function positiveInt(flag: string): (value: string) => string {
    return value => {
        if (!/^[1-9][0-9]*$/.test(value)) throw new InvalidArgumentError(`${flag} takes a positive integer (got '${value}')`);
        return value;
    };
}

program
    .command('lsp')
    .description('run the Calvin language server over stdio (for any LSP editor)')
    .option('--stdio', 'use stdio (the default; accepted for compatibility with editors that pass it)')
    .action(async () => {
        const { startServer } = await import('@calvin/server');
        startServer();
    });

program.parseAsync(process.argv).catch(e => {
    process.stderr.write(`calvin: internal error: ${(e as Error)?.stack ?? e}\n`);
    process.exit(2);
});
