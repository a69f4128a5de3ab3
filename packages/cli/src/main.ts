import { Command, Option } from 'commander';
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
    .argument('<files...>', 'files or directories (searched recursively for .calvin files)')
    .action(async (files: string[], options: { format: Format }) => {
        try {
            const report = await check(files);
            const out = options.format === 'json' ? formatJson(report)
                : options.format === 'sarif' ? formatSarif(report, version)
                    : formatText(report);
            process.stdout.write(out, () => process.exit(report.diagnostics.some(d => d.severity === 'error') ? 1 : 0));
        } catch (e) {
            if (e instanceof UsageError) {
                process.stderr.write(`calvin: ${e.message}\n`);
            } else {
                process.stderr.write(`calvin: internal error: ${(e as Error)?.stack ?? e}\n`);
            }
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
    process.stderr.write(`calvin: internal error: ${(e as Error)?.stack ?? e}\n`);
    process.exit(2);
});
