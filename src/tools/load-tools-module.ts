import { access } from 'node:fs/promises';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { tsImport } from 'tsx/esm/api';
import { CodecallError } from '../errors/index.ts';
import { checkToolApproval } from './tool-approval.ts';
import type { ToolDefinition } from '../spec/index.ts';

/** Loads a .js/.ts module whose default export is an array or record of `defineTool` results. */
export async function loadToolsModule(path: string): Promise<ToolDefinition[]> {
  const file = resolve(path);
  try {
    await access(file);
  } catch {
    throw new CodecallError('NOT_FOUND', `tools module not found: ${path}`);
  }
  const url = pathToFileURL(file).href;
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
  const exported = mod.default;
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
    const t = tool as Partial<ToolDefinition> | null;
    if (
      !t ||
      typeof t.name !== 'string' ||
      typeof t.execute !== 'function' ||
      typeof t.namespace !== 'string'
    ) {
      throw new CodecallError(
        'INVALID_ARGUMENT',
        `tools module ${path}: export #${i} is not a defineTool(...) result`,
      );
    }
    // A hand-built definition's approval policy is checked as defineTool checks it: a bad one fails the start.
    if (t.approval !== undefined) checkToolApproval(t.name, t.approval, t.requiresApproval);
  });
  return list as ToolDefinition[];
}
