import type { LangiumDocument, ValidationOptions } from 'langium';
import { Cancellation, DefaultDocumentValidator, DocumentValidator } from 'langium';
import type { Diagnostic } from 'vscode-languageserver-types';
import { isBuiltinUri } from '../builtins.js';

/**
 * Gives Langium's built-in diagnostics Calvin's codes (checking.md): lexer and
 * parser errors become `syntax`, unresolved references `name`, with messages
 * that say what to do.
 */
export class CalvinDocumentValidator extends DefaultDocumentValidator {
    override async validateDocument(document: LangiumDocument, options: ValidationOptions = {}, cancelToken = Cancellation.CancellationToken.None): Promise<Diagnostic[]> {
        if (isBuiltinUri(document.uri)) return [];
        const diagnostics = await super.validateDocument(document, options, cancelToken);
        for (const d of diagnostics) {
            const langiumCode = (d.data as { code?: string } | undefined)?.code;
            d.source = 'calvin';
            if (langiumCode === DocumentValidator.LexingError) {
                d.code = 'syntax';
                d.message = lexerMessage(String(d.message));
            } else if (langiumCode === DocumentValidator.ParsingError) {
                d.code = 'syntax';
                d.message = parserMessage(String(d.message));
            } else if (langiumCode === DocumentValidator.LinkingError) {
                d.code = 'name';
                const refText = (d.data as { refText?: string }).refText ?? '';
                d.message = `Unknown name '${refText}': declare it before use or check its spelling.`;
            }
        }
        return diagnostics;
    }
}

function lexerMessage(m: string): string {
    const match = /unexpected character: ->(.)<-/.exec(m);
    if (match) {
        const ch = match[1];
        if (ch === "'") return `Unexpected character "'": primes (x') are only allowed inside annotations, right after a name.`;
        if (ch === '\\') return `Unexpected character '\\': \\old, \\result, \\forall and \\exists are only allowed inside annotations.`;
        return `Unexpected character '${ch}': it is not part of the Calvin language; remove it.`;
    }
    return m;
}

function parserMessage(m: string): string {
    // Chevrotain: "Expecting token of type ';' but found `x`." / "Expecting: one of these possible Token sequences: ..."
    const expecting = /^Expecting token of type '(.+?)' but found `(.*)`\.?$/s.exec(m);
    if (expecting) {
        const found = expecting[2] === '' ? 'the end of the file' : `'${expecting[2]}'`;
        return `Syntax error: expected '${expecting[1]}' but found ${found}.`;
    }
    const oneOf = /^Expecting: (?:one of these possible Token sequences|expecting at least one iteration[^:]*):?(.*?)but found: '(.*)'$/s.exec(m);
    if (oneOf) {
        const options = [...oneOf[1].matchAll(/\[([^\]]+)\]/g)].map(x => x[1]).slice(0, 6);
        const found = oneOf[2] === '' ? 'the end of the file' : `'${oneOf[2]}'`;
        return options.length > 0
            ? `Syntax error: unexpected ${found}; expected one of ${options.join(', ')}.`
            : `Syntax error: unexpected ${found}.`;
    }
    const redundant = /^Redundant input, expecting EOF but found: (.*)$/s.exec(m);
    if (redundant) return `Syntax error: unexpected '${redundant[1]}'; a declaration (class, field, method or thread) was expected.`;
    return `Syntax error: ${m}`;
}
