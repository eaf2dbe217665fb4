import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { ceilingsConfigShape } from './config-ceilings.ts';
import { CodecallError } from '../errors/index.ts';
import { streamConfigShape } from './config-streams.ts';
import { modelConfigFrom } from '../model/index.ts';
import type { ModelConfig } from '../model/index.ts';
import { connectionsConfigShape } from './config-connections.ts';
import { requestsConfigShape } from './config-requests.ts';
import { approvalsConfigShape } from './config-approvals.ts';
import { sizesConfigShape } from './config-sizes.ts';
import { originConfigShape } from './config-origin.ts';
import { auditConfigShape } from './config-audit.ts';
import { metricsConfigShape } from './config-metrics.ts';
import { sandboxConfigShape } from './config-sandbox.ts';
import { postgresConfigShape } from './config-postgres.ts';
import { egressConfigShape } from './config-egress.ts';
import { toolLimitsConfigShape } from './config-tool-limits.ts';
import { mcpConfigShape } from './config-mcp.ts';
import { otelConfigShape } from './config-otel.ts';

/**
 * The port `codecall serve` listens on unless told otherwise. Not 8080: that is llama.cpp's llama-server's own
 * default, where the `llamacpp` model preset looks for it (and 8000 is vLLM's, 11434 Ollama's), so a model
 * server and codecall both started with their defaults do not collide.
 */
export const DEFAULT_PORT = 8484;

/** Everything `codecall serve` runs with: defaults < config file < environment < flags, validated and frozen. */
export const serviceConfigSchema = z
  .object({
    port: z.number().int().min(0).max(65_535).default(DEFAULT_PORT),
    host: z.string().min(1).default('127.0.0.1'),
    /** The task database: an SQLite file (created with its directory) or a `postgres://` URL. */
    db: z.string().min(1).default('data/codecall.db'),
    /** A .js/.ts module whose default export is the tools. */
    tools: z.string().min(1).nullable().default(null),
    concurrency: z.number().int().min(1).max(10_000).default(4),
    /** Tasks of one tenant running at once, across every server on the database. */
    tenantConcurrency: z.number().int().min(1).max(10_000).nullable().default(null),
    /** `whsec_<base64>`: signs webhooks (Standard Webhooks). Without it, tasks cannot have a callback_url. */
    webhookSecret: z.string().min(1).nullable().default(null),
    /** Lets webhooks go to loopback, private and link-local addresses (local development, tests). */
    allowPrivateWebhooks: z.boolean().default(false),
    /** No API keys: every request acts as the admin of tenant `default`. For local use only. */
    insecureNoAuth: z.boolean().default(false),
    /** Largest request body in bytes (a batch of 1,000 tasks needs room). */
    bodyLimitBytes: z
      .number()
      .int()
      .min(1024)
      .max(1024 ** 3)
      .default(16 * 1024 * 1024),
    /** How long a worker's claim on a running task lasts unrenewed: after a crash, its tasks recover this late. */
    leaseMs: z.number().int().min(100).max(600_000).default(15_000),
    /**
     * Runs again after a tool's service could not be reached (TOOL_UNAVAILABLE: an MCP server down, ADR 0047),
     * before the task's own `max_retries` is counted; then `needs_attention`. 0: at once. (The runtime's default.)
     */
    toolUnavailableRetries: z.number().int().min(0).max(100).default(5),
    /** The first wait before such a run, doubling each time (half of each jittered, at most 5 minutes). */
    toolUnavailableRetryBaseMs: z.number().int().min(10).max(300_000).default(2000),
    /** How long a graceful shutdown waits for running tasks to pause. */
    shutdownTimeoutMs: z.number().int().min(0).max(600_000).default(10_000),
    /** Runs Python tasks where bubblewrap and the system's python3 work (else they fail SANDBOX_UNAVAILABLE). */
    python: z.boolean().default(true),
    /** Sandboxed Python interpreters kept started ahead of use. */
    pythonWarm: z.number().int().min(0).max(256).default(2),
    /** Pooled Python sandboxes are fork servers: each execution forked in namespaces of its own (ADR 0061). */
    pythonForkServer: z.boolean().default(false),
    /** The model of instruction tasks (see modelConfigFrom): a provider preset, its URL, model and key. */
    provider: z.string().min(1).nullable().default(null),
    baseUrl: z.string().url().nullable().default(null),
    model: z.string().min(1).nullable().default(null),
    apiKey: z.string().min(1).nullable().default(null),
    /** A retried agent step runs its read and idempotent calls again instead of reusing the failed step's (ADR 0034). */
    agentRerunReads: z.boolean().default(false),
    /** Stream the model's replies that carry a schema and stop them at the first invalid byte (ADR 0057). */
    modelStreamValidation: z.boolean().default(false),
    /** How a structured answer's schema goes to the model server; null: the provider preset's form (ADR 0057). */
    modelResponseConstraint: z
      .enum(['response_format', 'json_schema', 'grammar', 'structured_outputs', 'guided_json', 'none'])
      .nullable()
      .default(null),
    ...connectionsConfigShape,
    ...requestsConfigShape,
    ...approvalsConfigShape,
    ...ceilingsConfigShape,
    ...sizesConfigShape,
    ...streamConfigShape,
    ...originConfigShape,
    ...auditConfigShape,
    ...metricsConfigShape,
    ...sandboxConfigShape,
    ...postgresConfigShape,
    ...egressConfigShape,
    ...toolLimitsConfigShape,
    ...mcpConfigShape,
    ...otelConfigShape,
  })
  .strict();

export type ServiceConfig = Readonly<z.infer<typeof serviceConfigSchema>>;
type Key = keyof ServiceConfig;

const KEYS = Object.keys(serviceConfigSchema.shape) as Key[];

/** `tenantConcurrency` -> `CODECALL_TENANT_CONCURRENCY`. */
export function envName(key: Key): string {
  return `CODECALL_${key.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}`;
}

export interface LoadConfigOptions {
  /** Flag values as given on the command line (strings; booleans for switches), by config key. */
  readonly flags?: Partial<Record<Key, string | boolean>>;
  /** Where a flag value came from when not from `--key` itself (`--metrics-token-file FILE`), for errors. */
  readonly flagSources?: Partial<Record<Key, string>>;
  /** A JSON config file (also from CODECALL_CONFIG). */
  readonly file?: string;
  /** The environment (CODECALL_*): the CLI's `main` passes process.env, read there and nowhere else. */
  readonly env: Readonly<Record<string, string | undefined>>;
}

/**
 * Merges the sources, each value checked against the schema; an error (INVALID_CONFIG) names the key and the
 * source it came from, e.g. `port (from CODECALL_PORT) must be ...`.
 */
export function loadConfig(options: LoadConfigOptions): ServiceConfig {
  const { env } = options;
  const merged: Record<string, { value: unknown; source: string }> = {};
  const file = options.file ?? env.CODECALL_CONFIG;
  if (file !== undefined && file !== '') {
    for (const [key, value] of Object.entries(readConfigFile(file))) {
      merged[key] = { value, source: file };
    }
  }
  for (const key of KEYS) {
    const text = env[envName(key)];
    if (text !== undefined && text !== '') merged[key] = { value: fromText(key, text), source: envName(key) };
  }
  for (const key of KEYS) {
    const flag = options.flags?.[key];
    if (flag !== undefined) {
      merged[key] = {
        value: typeof flag === 'string' ? fromText(key, flag) : flag,
        source: options.flagSources?.[key] ?? flagName(key),
      };
    }
  }
  const input = Object.fromEntries(Object.entries(merged).map(([k, v]) => [k, v.value]));
  const parsed = serviceConfigSchema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const key = String(issue?.path[0] ?? '');
    const source = merged[key]?.source;
    const where = source === undefined ? '' : ` (from ${source})`;
    const message =
      issue?.code === 'unrecognized_keys'
        ? `unknown config key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.join(', ')}${file ? ` in ${file}` : ''}`
        : `${key}${where}: ${issue?.message ?? 'invalid'}`;
    throw new CodecallError('INVALID_CONFIG', `config ${message}`, {
      details: { field: key, ...(source === undefined ? {} : { source }) },
    });
  }
  return Object.freeze(parsed.data);
}

function flagName(key: Key): string {
  return `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
}

function readConfigFile(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new CodecallError('INVALID_CONFIG', `cannot read config file ${path}: ${(e as Error).message}`, {
      details: { source: path },
    });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw new CodecallError('INVALID_CONFIG', `config file ${path} is not JSON: ${(e as Error).message}`, {
      details: { source: path },
    });
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new CodecallError('INVALID_CONFIG', `config file ${path} must hold a JSON object`, {
      details: { source: path },
    });
  }
  return parsed as Record<string, unknown>;
}

/** Environment and flag values are text; the schema says what each must become. */
function fromText(key: Key, text: string): unknown {
  const def = serviceConfigSchema.shape[key];
  const probe = (value: unknown): boolean => def.safeParse(value).success;
  if (probe(false) && !probe('x')) {
    if (/^(1|true|yes|on)$/i.test(text)) return true;
    if (/^(0|false|no|off)$/i.test(text)) return false;
    return text;
  }
  // A number where the schema takes no such text (probing fixed numbers missed keys whose minimum is above them).
  const n = Number(text);
  return text.trim() !== '' && Number.isFinite(n) && !probe(text) ? n : text;
}

/**
 * The model instruction tasks use: the config's provider, base URL, model and key, else the usual variables
 * (OPENAI_API_KEY, OPENAI_BASE_URL, MISTRAL_API_KEY); null when nothing names one.
 */
export function loadModelConfig(
  config: ServiceConfig,
  env: Readonly<Record<string, string | undefined>>,
): ModelConfig | null {
  const flags = {
    ...(config.provider === null ? {} : { provider: config.provider }),
    ...(config.baseUrl === null ? {} : { baseUrl: config.baseUrl }),
    ...(config.model === null ? {} : { model: config.model }),
    ...(config.apiKey === null ? {} : { apiKey: config.apiKey }),
  };
  return modelConfigFrom(env, flags);
}
