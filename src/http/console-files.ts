import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// Where the console's files are and whether they are built, without fastify: `codecall serve` reads this early.

/** Where `npm run build` (and `npm install`, by `prepare`) writes the console: dist/console of the package. */
// Two levels up from both src/http/*.ts and dist/http/*.js is the package's root.
export const DEFAULT_CONSOLE_ROOT = fileURLToPath(new URL('../../dist/console/', import.meta.url));

export const CONSOLE_NOT_BUILT =
  'The codecall web console is not built. Build it with `npm run build` (or `npm install`, which runs it) in ' +
  'the codecall package, then restart `codecall serve`. The API under /api/v1 works without it.';

export interface ConsoleOptions {
  /** The built console (index.html and assets/). */
  readonly root: string;
}

export function consoleBuilt(root: string): boolean {
  return existsSync(join(root, 'index.html'));
}
