import { z } from 'zod';
import { CodecallError } from '../errors/index.ts';

export const OTEL_SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;
export type OtelSampler = (typeof OTEL_SAMPLERS)[number];

/** The OTLP/HTTP encodings (`grpc` is not offered: its exporter would pull in a gRPC stack). */
export const OTEL_PROTOCOLS = ['http/protobuf', 'http/json'] as const;
export type OtelProtocol = (typeof OTEL_PROTOCOLS)[number];
/** The OTLP specification's default, which Jaeger, Tempo and the Collector all take. */
export const DEFAULT_OTEL_PROTOCOL: OtelProtocol = 'http/protobuf';

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

/**
 * Traces (ADR 0053) and the service's log. The `otel*` keys win over the standard `OTEL_*` variables, which are
 * read where the config is (`otelSettings`); nothing set: no provider, the API's no-op tracer.
 */
export const otelConfigShape = {
  /** OTLP/HTTP traces URL (`http://localhost:4318/v1/traces`); null: OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT. */
  otelEndpoint: z.string().url().nullable().default(null),
  /**
   * The export encoding; null: OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL, else
   * `http/protobuf` (the OTLP default).
   */
  otelProtocol: z.enum(OTEL_PROTOCOLS).nullable().default(null),
  /** `service.name` of the spans; null: OTEL_SERVICE_NAME, else `codecall`. */
  otelServiceName: z.string().min(1).max(256).nullable().default(null),
  /** Which traces are kept; null: OTEL_TRACES_SAMPLER, else `parentbased_always_on`. */
  otelSampler: z.enum(OTEL_SAMPLERS).nullable().default(null),
  /** The ratio of the `traceidratio` samplers; null: OTEL_TRACES_SAMPLER_ARG, else 1. */
  otelSamplerRatio: z.number().min(0).max(1).nullable().default(null),
  /** Program source, tool arguments and model messages in spans (off: none of them leave the service). */
  otelIncludeContent: z.boolean().default(false),
  /** Characters of each such content attribute, at most. */
  otelContentMaxBytes: z.number().int().min(16).max(65_536).default(1024),
  /** The service log's level. */
  logLevel: z.enum(LOG_LEVELS).default('info'),
  /** `text`: the lines as they are; `json`: pino's JSON, with task, trace and span ids where they exist. */
  logFormat: z.enum(['text', 'json']).default('text'),
};

/** What the tracer provider is made with; null when no endpoint is known (tracing off). */
export interface OtelSettings {
  readonly url: string;
  /** The export encoding (absent: `http/protobuf`). */
  readonly protocol?: OtelProtocol;
  readonly serviceName: string;
  readonly sampler: OtelSampler;
  readonly ratio: number;
  readonly includeContent: boolean;
  readonly contentMaxBytes: number;
  /** OTEL_EXPORTER_OTLP_(TRACES_)HEADERS, `k=v,k=v`. */
  readonly headers: Readonly<Record<string, string>>;
}

/** The config keys tracing reads (the service's `ServiceConfig` has them). */
export interface OtelConfig {
  readonly otelEndpoint: string | null;
  readonly otelProtocol?: OtelProtocol | null;
  readonly otelServiceName: string | null;
  readonly otelSampler: OtelSampler | null;
  readonly otelSamplerRatio: number | null;
  readonly otelIncludeContent: boolean;
  readonly otelContentMaxBytes: number;
}

/** The defaults of the otel keys, for commands that read no service config (`exec`, `run`). */
export const OTEL_DEFAULTS: OtelConfig = {
  otelEndpoint: null,
  otelProtocol: null,
  otelServiceName: null,
  otelSampler: null,
  otelSamplerRatio: null,
  otelIncludeContent: false,
  otelContentMaxBytes: 1024,
};

/**
 * Tracing settings from the config and the standard variables: OTEL_SDK_DISABLED, OTEL_TRACES_EXPORTER=none,
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (as is), OTEL_EXPORTER_OTLP_ENDPOINT (`/v1/traces` added),
 * OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL, OTEL_SERVICE_NAME, OTEL_TRACES_SAMPLER(_ARG). A variable's bad value is
 * INVALID_CONFIG naming it.
 */
export function otelSettings(
  config: OtelConfig,
  env: Readonly<Record<string, string | undefined>>,
): OtelSettings | null {
  const get = (name: string): string | undefined => {
    const v = env[name]?.trim();
    return v === undefined || v === '' ? undefined : v;
  };
  if (get('OTEL_SDK_DISABLED')?.toLowerCase() === 'true') return null;
  if (config.otelEndpoint === null && get('OTEL_TRACES_EXPORTER')?.toLowerCase() === 'none') return null;
  const base = get('OTEL_EXPORTER_OTLP_ENDPOINT');
  const url =
    config.otelEndpoint ??
    get('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT') ??
    (base === undefined ? undefined : `${base.replace(/\/+$/, '')}/v1/traces`);
  if (url === undefined) return null;
  checkUrl(url, config.otelEndpoint === null ? 'OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT' : 'otelEndpoint');
  const samplerText = config.otelSampler ?? get('OTEL_TRACES_SAMPLER') ?? 'parentbased_always_on';
  if (!(OTEL_SAMPLERS as readonly string[]).includes(samplerText)) {
    throw invalid('OTEL_TRACES_SAMPLER', `must be one of ${OTEL_SAMPLERS.join(', ')}`);
  }
  const ratioText = get('OTEL_TRACES_SAMPLER_ARG');
  const ratio = config.otelSamplerRatio ?? (ratioText === undefined ? 1 : Number(ratioText));
  if (!Number.isFinite(ratio) || ratio < 0 || ratio > 1) {
    throw invalid('OTEL_TRACES_SAMPLER_ARG', 'must be a number from 0 to 1');
  }
  const protocolName = get('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL')
    ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'
    : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const protocolText = config.otelProtocol ?? get(protocolName) ?? DEFAULT_OTEL_PROTOCOL;
  if (!(OTEL_PROTOCOLS as readonly string[]).includes(protocolText)) {
    throw invalid(
      protocolName,
      `must be one of ${OTEL_PROTOCOLS.join(', ')}${protocolText === 'grpc' ? ' (grpc is not supported: use http/protobuf on port 4318)' : ''}`,
    );
  }
  return {
    url,
    protocol: protocolText as OtelProtocol,
    serviceName: config.otelServiceName ?? get('OTEL_SERVICE_NAME') ?? 'codecall',
    sampler: samplerText as OtelSampler,
    ratio,
    includeContent: config.otelIncludeContent,
    contentMaxBytes: config.otelContentMaxBytes,
    headers: parseHeaders(get('OTEL_EXPORTER_OTLP_TRACES_HEADERS') ?? get('OTEL_EXPORTER_OTLP_HEADERS')),
  };
}

function checkUrl(url: string, source: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalid(source, 'must be an http(s) URL');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw invalid(source, 'must be an http(s) URL');
  }
}

/** `k=v,k2=v2` with URL-encoded values (the OTLP exporter spec's form); at most 64 headers. */
function parseHeaders(text: string | undefined): Record<string, string> {
  if (text === undefined) return {};
  const headers: Record<string, string> = {};
  for (const pair of text.split(',').slice(0, 64)) {
    const at = pair.indexOf('=');
    if (at <= 0) throw invalid('OTEL_EXPORTER_OTLP_HEADERS', 'must be name=value pairs separated by commas');
    const value = pair.slice(at + 1).trim();
    let decoded: string;
    try {
      decoded = decodeURIComponent(value);
    } catch {
      decoded = value;
    }
    headers[pair.slice(0, at).trim()] = decoded;
  }
  return headers;
}

function invalid(source: string, message: string): CodecallError {
  return new CodecallError('INVALID_CONFIG', `${source} ${message}`, { details: { source } });
}
