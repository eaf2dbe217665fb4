import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { CodecallError } from '../errors/index.ts';
import { checkMcpServers, parseMcpFlag } from '../mcp/index.ts';
import type { McpServerConfig } from '../mcp/index.ts';

/** The MCP servers of a command line: `--mcp NAME=COMMAND...` (repeatable) and `--mcp-config FILE`. */
export interface McpFlags {
  readonly mcp?: readonly string[];
  readonly mcpConfig?: string;
}

/**
 * The task metadata key under which `exec --db` and `run --db` remember their MCP servers as given (the `--mcp`
 * texts and the config file's absolute path, never what the file holds), so `tasks resume ... --db` connects to
 * them again.
 */
export const MCP_KEY = 'codecall_mcp';

export function hasMcp(flags: McpFlags): boolean {
  return (flags.mcp?.length ?? 0) > 0 || flags.mcpConfig !== undefined;
}

/**
 * The servers the flags name: a config file holds a JSON array of servers, or an object with `mcpServers` (a
 * service config file serves); the `--mcp` ones come after it. Names must be distinct.
 */
export async function mcpServersOf(flags: McpFlags): Promise<McpServerConfig[]> {
  const fromFile: unknown[] = [];
  if (flags.mcpConfig !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(await readFile(flags.mcpConfig, 'utf8'));
    } catch (e) {
      throw new CodecallError('INVALID_ARGUMENT', `--mcp-config ${flags.mcpConfig}: ${(e as Error).message}`);
    }
    const list = Array.isArray(parsed) ? parsed : (parsed as { mcpServers?: unknown } | null)?.mcpServers;
    if (!Array.isArray(list)) {
      throw new CodecallError(
        'INVALID_ARGUMENT',
        `--mcp-config ${flags.mcpConfig}: expected a JSON array of servers or an object with "mcpServers"`,
      );
    }
    fromFile.push(...(list as unknown[]));
  }
  const fromFlags = (flags.mcp ?? []).map(parseMcpFlag);
  return checkMcpServers([...fromFile, ...fromFlags], '--mcp');
}

/** The metadata remembering these flags with a new task (none without MCP servers). */
export function mcpMetadata(flags: McpFlags): Record<string, unknown> {
  if (!hasMcp(flags)) return {};
  return {
    [MCP_KEY]: {
      flags: [...(flags.mcp ?? [])],
      ...(flags.mcpConfig === undefined ? {} : { config: resolve(flags.mcpConfig) }),
    },
  };
}

/** The MCP flags remembered with a task (see MCP_KEY), or null. */
export function rememberedMcp(
  metadata: Readonly<Record<string, unknown>> | null | undefined,
): McpFlags | null {
  const value = metadata?.[MCP_KEY] as { flags?: unknown; config?: unknown } | undefined;
  if (typeof value !== 'object' || value === null) return null;
  const flags = Array.isArray(value.flags)
    ? value.flags.filter((f): f is string => typeof f === 'string')
    : [];
  return {
    mcp: flags,
    ...(typeof value.config === 'string' ? { mcpConfig: value.config } : {}),
  };
}
