import { resolve } from 'node:path';

/**
 * The task metadata key under which `exec --db` and `run --db` remember the tools module a task was started with
 * (an absolute path), so `tasks resume|approve|reject|input|resolve|revise --db` find it without `--tools`.
 */
export const TOOLS_MODULE_KEY = 'codecall_tools_module';

/** The metadata that remembers `--tools PATH` with a new task (none without --tools). */
export function toolsMetadata(tools: string | undefined): Record<string, string> {
  return tools === undefined ? {} : { [TOOLS_MODULE_KEY]: resolve(tools) };
}

/** The tools module remembered with a task (see TOOLS_MODULE_KEY), or null. */
export function rememberedTools(
  metadata: Readonly<Record<string, unknown>> | null | undefined,
): string | null {
  const path = metadata?.[TOOLS_MODULE_KEY];
  return typeof path === 'string' && path !== '' ? path : null;
}
