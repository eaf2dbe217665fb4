import { access } from 'node:fs/promises';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { tsImport } from 'tsx/esm/api';
import { CodecallError } from '../errors/index.ts';
import { isBrandedTool } from './define-tool.ts';
import { resolveCodecallFallback } from './resolve-codecall.ts';
import { checkToolApproval } from './tool-approval.ts';
import type { ToolDefinition } from '../spec/index.ts';

/** A `defineTool` result from any copy of codecall (its brand), or a hand-built definition of the same shape. */
function isToolDefinition(value: unknown): value is ToolDefinition {
  if (isBrandedTool(value)) return true;
  const t = value as Partial<ToolDefinition> | null;
  return (
    typeof t === 'object' &&
    t !== null &&
    typeof t.name === 'string' &&
    typeof t.execute === 'function' &&
    typeof t.namespace === 'string'
  );
}

/**
 * The module's default export. A CommonJS module compiled from `export default` (a .ts file in a project
 * without "type": "module") arrives as `{ __esModule: true, default: ... }`: its `default` is meant.
 */
function defaultExport(mod: { default?: unknown }): unknown {
  const exported = mod.default;
  if (typeof exported !== 'object' || exported === null || Array.isArray(exported)) return exported;
  const record = exported as { __esModule?: unknown; default?: unknown };
  if (!Object.prototype.hasOwnProperty.call(record, 'default') || isToolDefinition(record.default))
    return exported;
  return record.__esModule === true || Object.keys(record).every((key) => key === 'default')
    ? record.default
    : exported;
}

/**
 * Loads a .js/.mjs/.cjs/.ts module, ESM or CommonJS, whose default export (`module.exports`) is an array or
 * record of `defineTool` results. Its `codecall` is its own project's, else this one.
 */
export async function loadToolsModule(path: string): Promise<ToolDefinition[]> {
  const file = resolve(path);
  try {
    await access(file);
  } catch {
    throw new CodecallError('NOT_FOUND', `tools module not found: ${path}`);
  }
  const url = pathToFileURL(file).href;
  resolveCodecallFallback();
  let mod: { default?: unknown };
  try {
    mod = /\.[cm]?ts$/.test(file)
      ? ((await tsImport(url, import.meta.url)) as { default?: unknown })
      : ((await import(url)) as { default?: unknown });
  } catch (cause) {
    throw new CodecallError(
      'INVALID_ARGUMENT',
      `could not load tools module ${path}: ${(cause as Error).message}`,
      {
        cause,
      },
    );
  }
  const exported = defaultExport(mod);
  const list = Array.isArray(exported)
    ? (exported as unknown[])
    : typeof exported === 'object' && exported !== null
      ? Object.values(exported)
      : null;
  if (!list) {
    throw new CodecallError(
      'INVALID_ARGUMENT',
      `tools module ${path} must export by default an array or a record of defineTool(...) results`,
    );
  }
  list.forEach((tool, i) => {
    if (!isToolDefinition(tool)) {
      throw new CodecallError(
        'INVALID_ARGUMENT',
        `tools module ${path}: export #${i} is not a defineTool(...) result`,
      );
    }
    // A hand-built definition's approval policy is checked as defineTool checks it: a bad one fails the start.
    if (tool.approval !== undefined) checkToolApproval(tool.name, tool.approval, tool.requiresApproval);
  });
  return list as ToolDefinition[];
}
