import { ROOT_CONTEXT, TraceFlags, context, isSpanContextValid, trace } from '@opentelemetry/api';
import type { Context, SpanContext } from '@opentelemetry/api';
import { createTraceState } from '@opentelemetry/api';
import { CodecallError } from '../errors/index.ts';
import type { TraceContext } from '../spec/index.ts';

/** W3C Trace Context, version 00 (other versions are read by their first four fields, as the spec asks). */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
/** The spec's bound on tracestate is 32 members; 512 characters keeps any honest one and refuses a flood. */
const MAX_TRACESTATE = 512;

/**
 * A caller's `traceparent` (and `tracestate`) header, checked: null when absent; a malformed one is
 * INVALID_ARGUMENT (a caller that sends one means it, and a silent drop would hide its broken trace).
 */
export function parseTraceHeaders(traceparent: unknown, tracestate: unknown): TraceContext | null {
  if (traceparent === undefined) return null;
  const text = typeof traceparent === 'string' ? traceparent.trim().toLowerCase() : '';
  const m = TRACEPARENT.exec(text);
  const [, version, traceId, spanId] = m ?? [];
  const valid =
    m !== null &&
    version !== 'ff' &&
    (version !== '00' || m[5] === undefined) &&
    isSpanContextValid({ traceId: traceId ?? '', spanId: spanId ?? '', traceFlags: 0 });
  if (!valid) {
    throw new CodecallError(
      'INVALID_ARGUMENT',
      'the traceparent header is not a W3C trace context (00-<32 hex trace id>-<16 hex span id>-<2 hex flags>)',
      { details: { field: 'traceparent' } },
    );
  }
  const state = typeof tracestate === 'string' ? tracestate.trim() : '';
  const keep = state !== '' && state.length <= MAX_TRACESTATE;
  return { traceparent: text.slice(0, 55), ...(keep ? { tracestate: state } : {}) };
}

/** The context whose (remote) parent a persisted trace context names; the root context when it names none. */
export function contextOf(tc: TraceContext | undefined, base: Context = ROOT_CONTEXT): Context {
  if (!tc) return base;
  const m = TRACEPARENT.exec(tc.traceparent);
  if (!m) return base;
  const parent: SpanContext = {
    traceId: m[2] ?? '',
    spanId: m[3] ?? '',
    traceFlags: parseInt(m[4] ?? '0', 16) & TraceFlags.SAMPLED,
    isRemote: true,
    ...(tc.tracestate ? { traceState: createTraceState(tc.tracestate) } : {}),
  };
  return isSpanContextValid(parent) ? trace.setSpanContext(base, parent) : base;
}

/** The trace context of a span (or of the active one): what goes out as `traceparent`, or undefined. */
export function traceContextOf(ctx: Context = context.active()): TraceContext | undefined {
  const sc = trace.getSpanContext(ctx);
  if (!sc || !isSpanContextValid(sc)) return undefined;
  return traceContextOfSpan(sc);
}

/**
 * The trace context of a span context the SDK made (valid by construction): no validation, as this runs once
 * per tool call.
 */
export function traceContextOfSpan(sc: SpanContext): TraceContext {
  const flags = (sc.traceFlags & TraceFlags.SAMPLED).toString(16).padStart(2, '0');
  const traceparent = `00-${sc.traceId}-${sc.spanId}-${flags}`;
  const state = sc.traceState?.serialize();
  return state ? { traceparent, tracestate: state } : { traceparent };
}

/**
 * Adds `traceparent`/`tracestate` of the active context to outgoing headers unless the caller set its own:
 * what the host sends for the guest (egress) and to MCP servers joins the task's trace.
 */
export function withTraceHeaders(headers: Record<string, string>): Record<string, string> {
  const tc = traceContextOf();
  if (!tc) return headers;
  const has = (name: string) => Object.keys(headers).some((k) => k.toLowerCase() === name);
  if (has('traceparent')) return headers;
  return {
    ...headers,
    traceparent: tc.traceparent,
    ...(tc.tracestate && !has('tracestate') ? { tracestate: tc.tracestate } : {}),
  };
}

/** `withTraceHeaders` for Node's raw header list (`[name, value, name, value, ...]`). */
export function withTraceHeaderList(headers: readonly string[]): string[] {
  const tc = traceContextOf();
  const list = [...headers];
  if (!tc) return list;
  const names = new Set(list.filter((_, i) => i % 2 === 0).map((n) => n.toLowerCase()));
  if (names.has('traceparent')) return list;
  list.push('traceparent', tc.traceparent);
  if (tc.tracestate && !names.has('tracestate')) list.push('tracestate', tc.tracestate);
  return list;
}
