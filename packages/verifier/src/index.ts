export * from './model/program.js';
export * from './verify.js';
export * from './solver/index.js';
export { Vocabulary } from './heap/vocabulary.js';
