import { CodecallError } from '../errors/index.ts';
import type { McpServerConfig } from './mcp-config.ts';

// `{{env:NAME}}` in a server's `headers` and `env` values is codecall's environment variable NAME, read when the
// server is connected: a config file (or CODECALL_MCP_SERVERS) names the secret, never holds it. The resolved
// config lives only in the connection; what codecall prints, journals or stores is the config as given.

const PLACEHOLDER = /\{\{env:([^{}]*)\}\}/g;
const VARIABLE = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Where variables come from: codecall's environment, unless a caller gives another. */
export type McpEnvironment = Readonly<Record<string, string | undefined>>;

function substitute(server: string, where: string, value: string, environment: McpEnvironment): string {
  return value.replace(PLACEHOLDER, (_whole, name: string) => {
    if (!VARIABLE.test(name)) {
      throw new CodecallError(
        'INVALID_CONFIG',
        `MCP server ${server}: ${where}: {{env:${name}}} does not name an environment variable`,
        { details: { server, field: where } },
      );
    }
    const found = environment[name];
    if (found === undefined || found === '') {
      throw new CodecallError(
        'INVALID_CONFIG',
        `MCP server ${server}: ${where} needs the environment variable ${name}, which is not set`,
        { details: { server, field: where, variable: name } },
      );
    }
    return found;
  });
}

function resolveRecord(
  server: string,
  field: 'headers' | 'env',
  record: Readonly<Record<string, string>> | undefined,
  environment: McpEnvironment,
): Record<string, string> | undefined {
  if (record === undefined) return undefined;
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(record)) {
    out[key] = substitute(server, `${field}.${key}`, value, environment);
  }
  return out;
}

/** The names of the variables a server's config reads (`{{env:NAME}}` in its headers and env). */
export function mcpSecretNames(server: McpServerConfig): string[] {
  const values = [...Object.values(server.headers ?? {}), ...Object.values(server.env ?? {})];
  return [...new Set(values.flatMap((v) => [...v.matchAll(PLACEHOLDER)].map((m) => m[1] ?? '')))];
}

/**
 * The server with `{{env:NAME}}` in its header and env values replaced; INVALID_CONFIG (naming the server, the
 * field and the variable, never a value) when a variable is not set.
 */
export function resolveMcpSecrets(server: McpServerConfig, environment: McpEnvironment): McpServerConfig {
  const headers = resolveRecord(server.name, 'headers', server.headers, environment);
  const env = resolveRecord(server.name, 'env', server.env, environment);
  return { ...server, ...(headers ? { headers } : {}), ...(env ? { env } : {}) };
}

/** A message with every secret value the server's config reads replaced by `***` (an error may echo one). */
export function mcpRedactor(server: McpServerConfig, environment: McpEnvironment): (text: string) => string {
  const values = mcpSecretNames(server)
    .map((name) => environment[name])
    .filter((v): v is string => typeof v === 'string' && v.length >= 4);
  if (values.length === 0) return (text) => text;
  return (text) => values.reduce((t, v) => t.split(v).join('***'), text);
}
