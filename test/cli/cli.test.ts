// The `calvin` command (checking.md, "Command-line output"): the bundled CLI
// (packages/cli/out/calvin.cjs, built by `npm run build`) run as a child
// process on temporary files. Exit codes, the text, JSON and SARIF formats.
//
// Tests marked `todo: 'defect: ...'` state the correct behaviour where the
// implementation is wrong today (see the report of the test author).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CLI, EXAMPLES, ROOT } from '../util/paths.js';

interface Run {
    status: number | null;
    stdout: string;
    stderr: string;
}

/**
 * The CLI's front-end behaviour (formats, exit codes, files): `check` runs with
 * --no-verify unless `verify` is set; the verifier's findings are tested in
 * test/corpus and in the 'calvin check: verifier' suite below.
 */
function calvin(args: string[], cwd: string, verify = false): Run {
    const full = !verify && args[0] === 'check' ? ['check', '--no-verify', ...args.slice(1)] : args;
    const r = spawnSync(process.execPath, [CLI, ...full], { cwd, encoding: 'utf8', timeout: 120_000 });
    if (r.error) throw r.error;
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function show(r: Run): string {
    return `exit ${r.status}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;
}

function calvinFilesUnder(dir: string): string[] {
    const out: string[] = [];
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
        const p = path.join(dir, e.name);
        if (e.isDirectory()) out.push(...calvinFilesUnder(p));
        else if (e.name.endsWith('.calvin')) out.push(p);
    }
    return out;
}

const VERSION: string = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version;

// ----------------------------------------------------------------- fixtures

/** A program with no errors. */
const OK = `int x = 0;
thread T { x = 1; }
`;

/** Two front-end errors at known places (lines 3 and 4). */
const BAD = `int x = 0;
thread T {
  int y = true;
  z = 1;
}
`;

/** One class with two methods, one procedure, two threads: 5 procedures. */
const FIVE = `class C { int f; void a() { } void b() { } }
void p() { }
thread T { }
thread U[*] { }
`;

const SYNTAX = `int x = 0;
thread T { x = ; }
`;

const BAD_LINES = [
    "bad.calvin:3:11: error [type] The initial value of 'y' must be int, but this expression is boolean.",
    "bad.calvin:4:3: error [name] Unknown name 'z': declare it before use or check its spelling.",
];

const BAD_JSON_DIAGNOSTICS = [
    {
        file: 'bad.calvin', line: 3, column: 11, endLine: 3, endColumn: 15, severity: 'error', code: 'type',
        message: "The initial value of 'y' must be int, but this expression is boolean.",
    },
    {
        file: 'bad.calvin', line: 4, column: 3, endLine: 4, endColumn: 4, severity: 'error', code: 'name',
        message: "Unknown name 'z': declare it before use or check its spelling.",
    },
];

const SUMMARY = /^(\d+) files?, (\d+) procedures?: (\d+) errors?, (\d+) warnings? \((\d+) ms\)$/;

let dir = '';

before(() => {
    assert.ok(fs.existsSync(CLI), `the bundled CLI ${CLI} is missing: run 'npm run build' first`);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'calvin-cli-test-'));
    const write = (rel: string, text: string) => {
        fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
        fs.writeFileSync(path.join(dir, rel), text);
    };
    write('ok.calvin', OK);
    write('bad.calvin', BAD);
    write('five.calvin', FIVE);
    write('syntax.calvin', SYNTAX);
    write('eol.calvin', 'class G { int set; }\nthread T {\n  G g = new G();\n  //@ assert g.set == 1;\n}\n');
    // A tree: .calvin files at several depths, other files that must be ignored.
    write('tree/a.calvin', OK);
    write('tree/sub/b.calvin', OK.replace('x = 1', 'x = 2'));
    write('tree/sub/deeper/c.calvin', BAD);
    write('tree/sub/notes.txt', 'not a calvin file: int x = true;\n');
    write('tree/sub/deeper/d.calvin.bak', BAD);
    fs.mkdirSync(path.join(dir, 'empty'));
    write('with space/a b#1.calvin', BAD);
});

after(() => {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

// ----------------------------------------------------------------- exit codes

describe('calvin check: exit codes', () => {
    it('exits 0 on a clean file', () => {
        const r = calvin(['check', 'ok.calvin'], dir);
        assert.equal(r.status, 0, show(r));
        assert.equal(r.stderr, '');
    });

    it("exits 0 on the project's examples/ directory", () => {
        const r = calvin(['check', EXAMPLES], dir);
        assert.equal(r.status, 0, show(r));
        const m = SUMMARY.exec(r.stdout.trimEnd());
        assert.ok(m, show(r));
        assert.equal(Number(m[1]), calvinFilesUnder(EXAMPLES).length);
        assert.equal(Number(m[3]), 0);
    });

    it('all examples pass the front end with exit 0 and no diagnostics (--no-verify)', () => {
        const files = calvinFilesUnder(EXAMPLES).sort();
        assert.ok(files.length > 0);
        const r = calvin(['check', '--format', 'json', ...files], dir);
        assert.equal(r.status, 0, show(r));
        const report = JSON.parse(r.stdout);
        assert.equal(report.files, files.length);
        assert.deepEqual(report.diagnostics, []);
        const byDir = calvin(['check', '--format', 'json', EXAMPLES], dir);
        assert.equal(byDir.status, 0, show(byDir));
        assert.equal(JSON.parse(byDir.stdout).files, files.length);
    });

    it('exits 1 on a file with an error (any code, also syntax)', () => {
        const r = calvin(['check', 'bad.calvin'], dir);
        assert.equal(r.status, 1, show(r));
        const s = calvin(['check', 'syntax.calvin'], dir);
        assert.equal(s.status, 1, show(s));
        assert.match(s.stdout, /^syntax\.calvin:2:16: error \[syntax\] /m);
        const mixed = calvin(['check', 'ok.calvin', 'bad.calvin'], dir);
        assert.equal(mixed.status, 1, show(mixed));
    });

    it('exits 2 on a missing file, and says which', () => {
        const r = calvin(['check', 'ok.calvin', 'does-not-exist.calvin'], dir);
        assert.equal(r.status, 2, show(r));
        assert.equal(r.stdout, '');
        assert.match(r.stderr, /does-not-exist\.calvin/);
    });

    it('exits 2 on check with no arguments', () => {
        const r = calvin(['check'], dir);
        assert.equal(r.status, 2, show(r));
        assert.equal(r.stdout, '');
        assert.match(r.stderr, /missing required argument|files/i);
    });

    it('exits 2 on an unknown format', () => {
        const r = calvin(['check', '--format', 'xml', 'ok.calvin'], dir);
        assert.equal(r.status, 2, show(r));
        assert.equal(r.stdout, '');
        assert.match(r.stderr, /xml/);
        assert.match(r.stderr, /text.*json.*sarif/);
    });

    it('exits 2 on an unknown command or option, and without a command', () => {
        const r = calvin(['frobnicate', 'ok.calvin'], dir);
        assert.equal(r.status, 2, show(r));
        assert.match(r.stderr, /unknown command 'frobnicate'/);
        const o = calvin(['check', '--no-such-option', 'ok.calvin'], dir);
        assert.equal(o.status, 2, show(o));
        assert.match(o.stderr, /unknown option/);
        const none = calvin([], dir);
        assert.equal(none.status, 2, show(none));
    });

    it('--help and --version exit 0 and print the usage and the version', () => {
        const h = calvin(['--help'], dir);
        assert.equal(h.status, 0, show(h));
        assert.match(h.stdout, /^Usage: calvin /m);
        assert.match(h.stdout, /check \[options\] <files\.\.\.>/);
        const ch = calvin(['check', '--help'], dir);
        assert.equal(ch.status, 0, show(ch));
        assert.match(ch.stdout, /^Usage: calvin check /m);
        assert.match(ch.stdout, /--format/);
        assert.match(ch.stdout, /text.*json.*sarif/s);
        for (const flag of ['--version', '-v']) {
            const v = calvin([flag], dir);
            assert.equal(v.status, 0, show(v));
            assert.equal(v.stdout, `${VERSION}\n`);
        }
    });
});

// ----------------------------------------------------------------- text

describe('calvin check --format text', () => {
    it('prints file:line:col: severity [code] message lines and a summary line', () => {
        for (const args of [['check', 'bad.calvin'], ['check', '--format', 'text', 'bad.calvin']]) {
            const r = calvin(args, dir);
            assert.equal(r.status, 1, show(r));
            const lines = r.stdout.split('\n');
            assert.equal(lines.pop(), '', 'output ends with a newline');
            assert.deepEqual(lines.slice(0, -1), BAD_LINES);
            const m = SUMMARY.exec(lines[lines.length - 1]);
            assert.ok(m, `summary line: ${lines[lines.length - 1]}`);
            assert.deepEqual(m.slice(1, 5).map(Number), [1, 1, 2, 0]);
        }
    });

    it('a clean file prints only the summary', () => {
        const r = calvin(['check', 'ok.calvin'], dir);
        assert.match(r.stdout, /^1 file, 1 procedure: 0 errors, 0 warnings \(\d+ ms\)\n$/);
    });

    it('every diagnostic is one line, also when a syntax error is found at the end of a //@ line', () => {
        const r = calvin(['check', 'eol.calvin'], dir);
        assert.equal(r.status, 1, show(r));
        const lines = r.stdout.trimEnd().split('\n');
        assert.match(lines[lines.length - 1], SUMMARY);
        for (const l of lines.slice(0, -1)) assert.match(l, /^eol\.calvin:\d+:\d+: (error|warning|info) \[[a-z-]+\] \S.*$/);
    });

    it('diagnostics are sorted by file, then position', () => {
        const r = calvin(['check', 'bad.calvin', 'tree'], dir);
        assert.equal(r.status, 1, show(r));
        const lines = r.stdout.trimEnd().split('\n');
        assert.deepEqual(lines.slice(0, -1), [...BAD_LINES, ...BAD_LINES.map(l => 'tree/sub/deeper/c.calvin' + l.slice('bad.calvin'.length))]);
    });
});

// ----------------------------------------------------------------- json

describe('calvin check --format json', () => {
    it('prints exactly {files, procedures, diagnostics, timeMs} with 1-based positions', () => {
        const r = calvin(['check', '--format', 'json', 'bad.calvin'], dir);
        assert.equal(r.status, 1, show(r));
        assert.equal(r.stderr, '');
        const report = JSON.parse(r.stdout);
        assert.deepEqual(Object.keys(report).sort(), ['diagnostics', 'files', 'procedures', 'timeMs']);
        assert.equal(report.files, 1);
        assert.equal(report.procedures, 1);
        assert.ok(Number.isInteger(report.timeMs) && report.timeMs >= 0, `timeMs ${report.timeMs}`);
        for (const d of report.diagnostics) {
            assert.deepEqual(Object.keys(d).sort(), ['code', 'column', 'endColumn', 'endLine', 'file', 'line', 'message', 'severity']);
            assert.ok(['error', 'warning', 'info'].includes(d.severity));
            for (const k of ['line', 'column', 'endLine', 'endColumn']) assert.ok(Number.isInteger(d[k]) && d[k] >= 1, `${k} = ${d[k]}`);
        }
        assert.deepEqual(report.diagnostics, BAD_JSON_DIAGNOSTICS);
    });

    it('accepts --format=json, -f json and the option after the files', () => {
        for (const args of [['check', '--format=json', 'bad.calvin'], ['check', '-f', 'json', 'bad.calvin'], ['check', 'bad.calvin', '--format', 'json']]) {
            const r = calvin(args, dir);
            assert.equal(r.status, 1, show(r));
            assert.deepEqual(JSON.parse(r.stdout).diagnostics, BAD_JSON_DIAGNOSTICS, args.join(' '));
        }
    });

    it('a clean file gives an empty diagnostics list and exit 0', () => {
        const r = calvin(['check', '--format', 'json', 'ok.calvin'], dir);
        assert.equal(r.status, 0, show(r));
        const report = JSON.parse(r.stdout);
        assert.equal(report.files, 1);
        assert.deepEqual(report.diagnostics, []);
    });

    it('counts methods, top-level procedures and threads as procedures', () => {
        const r = calvin(['check', '--format', 'json', 'five.calvin'], dir);
        assert.equal(r.status, 0, show(r));
        assert.equal(JSON.parse(r.stdout).procedures, 5);
    });
});

// ----------------------------------------------------------------- directories

describe('calvin check on directories', () => {
    it('searches a directory recursively for .calvin files only', () => {
        const r = calvin(['check', '--format', 'json', 'tree'], dir);
        assert.equal(r.status, 1, show(r));
        const report = JSON.parse(r.stdout);
        assert.equal(report.files, 3);
        assert.equal(report.procedures, 3);
        assert.deepEqual(report.diagnostics, BAD_JSON_DIAGNOSTICS.map(d => ({ ...d, file: path.join('tree', 'sub', 'deeper', 'c.calvin') })));
    });

    it('a directory without .calvin files exits 2 and says so (a mistyped CI path never passes)', () => {
        const r = calvin(['check', '--format', 'json', 'empty'], dir);
        assert.equal(r.status, 2, show(r));
        assert.equal(r.stdout, '');
        assert.match(r.stderr, /^calvin: no \.calvin files under 'empty'\n$/);
    });

    it('files and directories can be mixed; a file named twice is checked once', () => {
        const r = calvin(['check', '--format', 'json', 'tree', 'tree/a.calvin', 'ok.calvin', 'tree/'], dir);
        assert.equal(r.status, 1, show(r));
        assert.equal(JSON.parse(r.stdout).files, 4);
    });

    it('the same file named through different paths is checked once', () => {
        const r = calvin(['check', '--format', 'json', 'bad.calvin', './bad.calvin', path.join(dir, 'bad.calvin')], dir);
        assert.equal(r.status, 1, show(r));
        const report = JSON.parse(r.stdout);
        assert.equal(report.files, 1);
        assert.equal(report.procedures, 1);
        assert.equal(report.diagnostics.length, 2);
    });
});

// ----------------------------------------------------------------- sarif

const SARIF_KEYS: Record<string, string[]> = {
    sarifLog: ['$schema', 'version', 'runs', 'inlineExternalProperties', 'properties'],
    run: ['tool', 'invocations', 'conversion', 'language', 'versionControlProvenance', 'originalUriBaseIds', 'artifacts',
        'logicalLocations', 'graphs', 'results', 'automationDetails', 'runAggregates', 'baselineGuid', 'redactionTokens',
        'defaultEncoding', 'defaultSourceLanguage', 'newlineSequences', 'columnKind', 'externalPropertyFileReferences',
        'threadFlowLocations', 'taxonomies', 'addresses', 'translations', 'policies', 'webRequests', 'webResponses',
        'specialLocations', 'properties'],
    tool: ['driver', 'extensions', 'properties'],
    toolComponent: ['guid', 'name', 'organization', 'product', 'productSuite', 'shortDescription', 'fullDescription', 'fullName',
        'version', 'semanticVersion', 'dottedQuadFileVersion', 'releaseDateUtc', 'downloadUri', 'informationUri',
        'globalMessageStrings', 'notifications', 'rules', 'taxa', 'locations', 'language', 'contents', 'isComprehensive',
        'localizedDataSemanticVersion', 'minimumRequiredLocalizedDataSemanticVersion', 'associatedComponent',
        'translationMetadata', 'supportedTaxonomies', 'properties'],
    reportingDescriptor: ['id', 'deprecatedIds', 'guid', 'deprecatedGuids', 'name', 'deprecatedNames', 'shortDescription',
        'fullDescription', 'messageStrings', 'defaultConfiguration', 'helpUri', 'help', 'relationships', 'properties'],
    multiformatMessageString: ['text', 'markdown', 'properties'],
    result: ['ruleId', 'ruleIndex', 'rule', 'kind', 'level', 'message', 'analysisTarget', 'locations', 'guid', 'correlationGuid',
        'occurrenceCount', 'partialFingerprints', 'fingerprints', 'stacks', 'codeFlows', 'graphs', 'graphTraversals',
        'relatedLocations', 'suppressions', 'baselineState', 'rank', 'attachments', 'hostedViewerUri', 'workItemUris',
        'provenance', 'fixes', 'taxa', 'webRequest', 'webResponse', 'properties'],
    message: ['text', 'markdown', 'id', 'arguments', 'properties'],
    location: ['id', 'physicalLocation', 'logicalLocations', 'message', 'annotations', 'relationships', 'properties'],
    physicalLocation: ['address', 'artifactLocation', 'region', 'contextRegion', 'properties'],
    artifactLocation: ['uri', 'uriBaseId', 'index', 'description', 'properties'],
    region: ['startLine', 'startColumn', 'endLine', 'endColumn', 'charOffset', 'charLength', 'byteOffset', 'byteLength',
        'snippet', 'message', 'sourceLanguage', 'properties'],
};

type Json = Record<string, unknown>;

function object(v: unknown, kind: string, where: string): Json {
    assert.ok(v !== null && typeof v === 'object' && !Array.isArray(v), `${where}: a ${kind} object`);
    const o = v as Json;
    for (const k of Object.keys(o)) assert.ok(SARIF_KEYS[kind].includes(k), `${where}: '${k}' is not a property of a SARIF ${kind}`);
    return o;
}

function positiveInt(v: unknown, where: string): number {
    assert.ok(Number.isInteger(v) && (v as number) >= 1, `${where} = ${String(v)}: a positive integer`);
    return v as number;
}

/** RFC 3986 URI reference (as SARIF requires for artifactLocation.uri): no spaces, no stray '#', '%' only as escapes. */
function isUriReference(s: string): boolean {
    return /^([A-Za-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9A-Fa-f]{2})*(#([A-Za-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9A-Fa-f]{2})*)?$/.test(s);
}

/** The essential constraints of the SARIF 2.1.0 schema (sarif-schema-2.1.0.json), checked by hand. */
function validateSarif(log: unknown): void {
    const root = object(log, 'sarifLog', 'log');
    assert.equal(root.version, '2.1.0');
    assert.equal(typeof root.$schema, 'string');
    assert.match(root.$schema as string, /^https:\/\/.*sarif.*2\.1\.0.*\.json$/);
    assert.ok(Array.isArray(root.runs), 'runs is an array');
    (root.runs as unknown[]).forEach((runValue, r) => {
        const run = object(runValue, 'run', `runs[${r}]`);
        const tool = object(run.tool, 'tool', `runs[${r}].tool`);
        const driver = object(tool.driver, 'toolComponent', `runs[${r}].tool.driver`);
        assert.equal(typeof driver.name, 'string');
        if (driver.version !== undefined) assert.equal(typeof driver.version, 'string');
        if (driver.informationUri !== undefined) assert.ok(URL.canParse(driver.informationUri as string), 'informationUri is an absolute URI');
        const rules = (driver.rules ?? []) as unknown[];
        assert.ok(Array.isArray(rules), 'rules is an array');
        const ids = rules.map((ruleValue, i) => {
            const rule = object(ruleValue, 'reportingDescriptor', `rules[${i}]`);
            assert.equal(typeof rule.id, 'string');
            if (rule.shortDescription !== undefined) {
                const sd = object(rule.shortDescription, 'multiformatMessageString', `rules[${i}].shortDescription`);
                assert.equal(typeof sd.text, 'string');
                assert.ok((sd.text as string).length > 0);
            }
            return rule.id as string;
        });
        assert.equal(new Set(ids).size, ids.length, 'rule ids are unique');
        assert.ok(Array.isArray(run.results), 'results is an array');
        (run.results as unknown[]).forEach((resultValue, i) => {
            const where = `results[${i}]`;
            const result = object(resultValue, 'result', where);
            const message = object(result.message, 'message', `${where}.message`);
            assert.equal(typeof message.text, 'string');
            assert.ok((message.text as string).length > 0);
            if (result.level !== undefined) assert.ok(['none', 'note', 'warning', 'error'].includes(result.level as string), `${where}.level`);
            if (result.kind !== undefined) assert.ok(['notApplicable', 'pass', 'fail', 'review', 'open', 'informational'].includes(result.kind as string));
            assert.equal(typeof result.ruleId, 'string');
            assert.ok(ids.includes(result.ruleId as string), `${where}.ruleId ${String(result.ruleId)} is among the rules`);
            if (result.ruleIndex !== undefined) {
                assert.ok(Number.isInteger(result.ruleIndex) && (result.ruleIndex as number) >= -1);
                assert.equal(ids[result.ruleIndex as number], result.ruleId, `${where}.ruleIndex points at its rule`);
            }
            assert.ok(Array.isArray(result.locations) && result.locations.length >= 1, `${where}.locations`);
            (result.locations as unknown[]).forEach((locValue, j) => {
                const loc = object(locValue, 'location', `${where}.locations[${j}]`);
                const phys = object(loc.physicalLocation, 'physicalLocation', `${where}.locations[${j}].physicalLocation`);
                const art = object(phys.artifactLocation, 'artifactLocation', `${where}...artifactLocation`);
                assert.equal(typeof art.uri, 'string');
                assert.ok(isUriReference(art.uri as string), `${where}...artifactLocation.uri ${JSON.stringify(art.uri)} is a valid URI reference`);
                const region = object(phys.region, 'region', `${where}...region`);
                const startLine = positiveInt(region.startLine, 'startLine');
                const startColumn = positiveInt(region.startColumn ?? 1, 'startColumn');
                const endLine = positiveInt(region.endLine ?? startLine, 'endLine');
                const endColumn = positiveInt(region.endColumn ?? startColumn, 'endColumn');
                assert.ok(endLine > startLine || (endLine === startLine && endColumn >= startColumn), `${where}: region ends after it starts`);
            });
        });
    });
}

describe('calvin check --format sarif', () => {
    it('prints valid SARIF 2.1.0 whose results match the JSON output', () => {
        const r = calvin(['check', '--format', 'sarif', 'bad.calvin', 'tree'], dir);
        assert.equal(r.status, 1, show(r));
        assert.equal(r.stderr, '');
        const log = JSON.parse(r.stdout);
        validateSarif(log);
        assert.equal(log.runs.length, 1);
        const driver = log.runs[0].tool.driver;
        assert.equal(driver.name, 'calvin');
        assert.equal(driver.version, VERSION);
        const rules = driver.rules.map((x: { id: string }) => x.id).sort();
        assert.deepEqual(rules, ['name', 'type']);

        const json = JSON.parse(calvin(['check', '--format', 'json', 'bad.calvin', 'tree'], dir).stdout);
        const results = log.runs[0].results;
        assert.equal(results.length, json.diagnostics.length);
        assert.equal(results.length, 4);
        results.forEach((res: Json & { locations: Array<{ physicalLocation: { artifactLocation: { uri: string }; region: Json } }>; message: { text: string } }, i: number) => {
            const d = json.diagnostics[i];
            assert.equal(res.ruleId, d.code);
            assert.equal(res.level, d.severity === 'info' ? 'note' : d.severity);
            assert.equal(res.message.text, d.message);
            const loc = res.locations[0].physicalLocation;
            assert.equal(loc.artifactLocation.uri, d.file.split(path.sep).join('/'));
            assert.deepEqual(loc.region, { startLine: d.line, startColumn: d.column, endLine: d.endLine, endColumn: d.endColumn });
        });
    });

    it('a clean file gives a run with no results and exit 0', () => {
        const r = calvin(['check', '--format', 'sarif', 'ok.calvin'], dir);
        assert.equal(r.status, 0, show(r));
        const log = JSON.parse(r.stdout);
        validateSarif(log);
        assert.deepEqual(log.runs[0].results, []);
    });

    it('artifact URIs are valid URI references also for paths with spaces and #', () => {
        const r = calvin(['check', '--format', 'sarif', 'with space'], dir);
        assert.equal(r.status, 1, show(r));
        const log = JSON.parse(r.stdout);
        validateSarif(log);
        assert.equal(log.runs[0].results[0].locations[0].physicalLocation.artifactLocation.uri, 'with%20space/a%20b%231.calvin');
    });
});
