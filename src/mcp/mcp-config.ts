import { z } from 'zod';
import { CodecallError } from '../errors/index.ts';
import { TOOL_EFFECTS } from '../spec/index.ts';
import type { ToolEffect } from '../spec/index.ts';
// A server's name is a member of the tools namespace: the names a tool may not take, it may not either.
import { RESERVED_TOOL_NAMES } from '../tools/index.ts';

/** What the operator says of one of a server's tools, over what its annotations say (ADR 0047). */
export interface McpToolOverride {
  /** Its effect; default from its annotations (`readOnlyHint` read, `idempotentHint` idempotent, else unsafe). */
  readonly effect?: ToolEffect;
  /** Its calls wait for a human's approval (default false). */
  readonly requiresApproval?: boolean;
}

/**
 * An MCP server whose tools programs call as `tools.<name>.<tool>(args)`: a command started with stdio
 * (`command`, `args`, `env`, `cwd`), or a Streamable HTTP endpoint (`url`, `headers`).
 */
export interface McpServerConfig {
  /** A JavaScript and Python identifier: the tools are `tools.<name>.<tool>`. */
  readonly name: string;
  readonly command?: string;
  readonly args?: readonly string[];
  /**
   * Variables of the server's process besides the few the SDK passes on (HOME, LOGNAME, PATH, SHELL, TERM,
   * USER): the rest of codecall's environment is not inherited.
   */
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string;
  readonly url?: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** Per tool, by its MCP name (or the name programs call it by). */
  readonly tools?: Readonly<Record<string, McpToolOverride>>;
  /**
   * Seconds one request to the server may take (listing, a call; a call's progress report starts it again);
   * default 60. Connecting (the server's start and `initialize`) is given at least 60.
   */
  readonly timeoutSeconds?: number;
  /**
   * Seconds one call may take in all, progress or not (a server that reports forever is cut off): default 600.
   * The call is cancelled (`notifications/cancelled`) and fails MCP_TIMEOUT, in doubt.
   */
  readonly maxCallSeconds?: number;
}

export const DEFAULT_MCP_TIMEOUT_SECONDS = 60;
export const DEFAULT_MCP_MAX_CALL_SECONDS = 600;

const SERVER_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

const toolOverride = z
  .object({
    effect: z.enum(TOOL_EFFECTS as [ToolEffect, ...ToolEffect[]]).optional(),
    requiresApproval: z.boolean().optional(),
  })
  .strict();

/** One server as the service config and `--mcp-config` files give it. */
export const mcpServerSchema = z
  .object({
    name: z
      .string()
      .regex(SERVER_NAME, 'must be an identifier (letters, digits, _; not starting with a digit)')
      .max(64)
      .refine((n) => !RESERVED_TOOL_NAMES.has(n), 'is a reserved name'),
    command: z.string().min(1).optional(),
    args: z.array(z.string()).optional(),
    env: z.record(z.string(), z.string()).optional(),
    cwd: z.string().min(1).optional(),
    url: z.string().url().optional(),
    headers: z.record(z.string(), z.string()).optional(),
    tools: z.record(z.string(), toolOverride).optional(),
    timeoutSeconds: z.number().gt(0).max(86_400).optional(),
    maxCallSeconds: z.number().gt(0).max(86_400).optional(),
  })
  .strict()
  .refine((s) => (s.command === undefined) !== (s.url === undefined), {
    message: 'needs either a command (stdio) or a url (Streamable HTTP), not both',
  })
  .refine((s) => s.url === undefined || /^https?:\/\//i.test(s.url), { message: 'url must be http(s)' });

/** A list of servers with distinct names. */
export const mcpServersSchema = z
  .array(mcpServerSchema)
  .max(100)
  .refine((list) => new Set(list.map((s) => s.name)).size === list.length, {
    message: 'server names must be distinct',
  });

/** Checks a list of servers (library callers, config files); INVALID_ARGUMENT names the first problem. */
export function checkMcpServers(servers: unknown, source = 'mcp servers'): McpServerConfig[] {
  const parsed = mcpServersSchema.safeParse(servers);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue?.path.length ? ` at ${issue.path.join('.')}` : '';
  throw new CodecallError('INVALID_ARGUMENT', `${source}${where}: ${issue?.message ?? 'invalid'}`);
}

/**
 * `--mcp NAME=COMMAND [ARGS...]` (split on spaces; quote with '...' or "..."), or `--mcp NAME=http(s)://URL`:
 * one server of the command line.
 */
export function parseMcpFlag(text: string): McpServerConfig {
  const eq = text.indexOf('=');
  const name = eq < 0 ? '' : text.slice(0, eq).trim();
  const rest = eq < 0 ? '' : text.slice(eq + 1).trim();
  if (name === '' || rest === '') {
    throw new CodecallError(
      'INVALID_ARGUMENT',
      `--mcp ${JSON.stringify(text)}: expected NAME=COMMAND [ARGS...] or NAME=URL`,
    );
  }
  const server: McpServerConfig = /^https?:\/\//i.test(rest)
    ? { name, url: rest }
    : (() => {
        const [command = '', ...args] = splitWords(rest);
        return { name, command, args };
      })();
  return checkMcpServers([server], `--mcp ${name}`)[0] as McpServerConfig;
}

/** Words split on whitespace, with '...' and "..." keeping theirs (no escapes, no variables: no shell). */
function splitWords(text: string): string[] {
  const words: string[] = [];
  const pattern = /'([^']*)'|"([^"]*)"|(\S+)/g;
  let current: string | null = null;
  let last = 0;
  for (const match of text.matchAll(pattern)) {
    const part = match[1] ?? match[2] ?? match[3] ?? '';
    // Adjacent parts (a"b c") make one word.
    if (current !== null && match.index === last) current += part;
    else {
      if (current !== null) words.push(current);
      current = part;
    }
    last = match.index + match[0].length;
  }
  if (current !== null) words.push(current);
  return words;
}
