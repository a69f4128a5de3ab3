import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root. */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** The project's own copy of the example programs. */
export const EXAMPLES = path.join(ROOT, 'examples');
/** The shared specification examples (next to the checkout, as in CI). */
export const SHARED_EXAMPLES = path.resolve(ROOT, '../shared/examples');
/** The bundled CLI (built by `npm run build`, which `npm ci` runs). */
export const CLI = path.join(ROOT, 'packages/cli/out/calvin.cjs');
