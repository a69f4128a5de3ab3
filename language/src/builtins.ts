import { URI } from 'langium';

/**
 * The implicit members of every object and array (language.md §2): the
 * monitor's `holder` and an array's `length`. They live in a small built-in
 * document so that references to them resolve like any other field (hover,
 * go to definition, find references).
 */
export const BUILTIN_URI = URI.parse('calvin-builtin:///builtins.calvin');

export const BUILTIN_CLASS_NAME = '$Object';

export const BUILTIN_SOURCE = `// Calvin's built-in members (language.md section 2). Not a user file.
class ${BUILTIN_CLASS_NAME} {
  // 0 when the object's monitor is free, else the id of the thread holding it.
  // Read it in annotations; only synchronized blocks and methods change it.
  //@ ghost int holder;
  // The number of elements of an array; fixed when the array is created.
  final int length;
}
`;

export function isBuiltinUri(uri: URI | string): boolean {
    return (typeof uri === 'string' ? uri : uri.toString()).startsWith('calvin-builtin:');
}
