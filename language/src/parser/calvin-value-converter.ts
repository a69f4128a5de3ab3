import { DefaultValueConverter, type CstNode, type GrammarAST, type ValueType } from 'langium';
import { identifierName } from './calvin-token-builder.js';

/** Identifiers stand for their name without Java's ignorable format characters (identifierName). */
export class CalvinValueConverter extends DefaultValueConverter {
    protected override runConverter(rule: GrammarAST.AbstractRule, input: string, cstNode: CstNode): ValueType {
        if (rule.name === 'ID') return identifierName(input);
        return super.runConverter(rule, input, cstNode);
    }
}
