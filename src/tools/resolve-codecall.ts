import { createRequire, register } from 'node:module';
import Module from 'node:module';

// A tools module anywhere (`codecall exec --tools /elsewhere/tools.ts`) imports `defineTool` from 'codecall'.
// Its own project's copy is used when it has one (its node_modules); otherwise the import resolves to the
// codecall that loads it, as a package's self-reference would: ESM imports through a resolve hook, CommonJS
// `require` (which the hooks of Node 20 do not see) through the CommonJS resolver.

const isCodecall = (specifier: string): boolean =>
  specifier === 'codecall' || specifier.startsWith('codecall/');

// The hook runs on the loader thread, so it is source text: a data: URL loads under any runner.
const HOOKS = `
let fallback;
export function initialize(data) { fallback = data.parentURL; }
export async function resolve(specifier, context, next) {
  try {
    return await next(specifier, context);
  } catch (error) {
    if ((specifier === 'codecall' || specifier.startsWith('codecall/')) && error?.code === 'ERR_MODULE_NOT_FOUND')
      return next(specifier, { ...context, parentURL: fallback });
    throw error;
  }
}`;

let installed = false;

/** Lets tools modules outside a project with codecall installed import or require 'codecall'. */
export function resolveCodecallFallback(): void {
  if (installed) return;
  installed = true;
  // Resolving from this file is the package's self-reference: 'codecall' is this copy's exports.
  const parentURL = import.meta.url;
  register(`data:text/javascript,${encodeURIComponent(HOOKS)}`, { parentURL, data: { parentURL } });
  const selfRequire = createRequire(parentURL);
  const cjs = Module as unknown as {
    _resolveFilename(request: string, parent: unknown, isMain: boolean, options?: unknown): string;
  };
  const original = cjs._resolveFilename.bind(cjs);
  cjs._resolveFilename = (request, parent, isMain, options) => {
    try {
      return original(request, parent, isMain, options);
    } catch (error) {
      if (isCodecall(request) && (error as { code?: unknown }).code === 'MODULE_NOT_FOUND')
        return selfRequire.resolve(request);
      throw error;
    }
  };
}
