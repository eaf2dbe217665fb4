import { ProxyTracerProvider, trace } from '@opentelemetry/api';

/**
 * Span ids chosen before their span is made (ADR 0053, amended 2026-12-07). A tool call's span is made after its
 * outcome went to the guest, off the call's answer path, but the tool needs the span's `traceparent` while it runs:
 * so the id is drawn when the call arrives and handed to the SDK when the span is made. The SDK takes ids from its
 * provider's id generator only; the composition root (service/telemetry-provider.ts) gives its provider this one
 * and marks it (`markPrimable`): with any other provider registered, spans are made at once, as before.
 */
let primed: string | undefined;

const ZERO = '0'.repeat(32);

/** Random lowercase hex of `bytes` bytes (as the SDK's RandomIdGenerator: Math.random, not for secrets). */
function randomHex(bytes: number): string {
  let s = '';
  for (let i = 0; i < bytes / 4; i++) s += ((Math.random() * 2 ** 32) >>> 0).toString(16).padStart(8, '0');
  // An all-zero id is invalid (W3C): the last byte is set instead, as the SDK does.
  return s === ZERO.slice(0, bytes * 2) ? `${s.slice(0, -2)}01` : s;
}

/** A new span id (16 hex digits, never all zero). */
export function newSpanId(): string {
  return randomHex(8);
}

/** The id generator of codecall's provider: random ids, except a span id primed for the span being made. */
export const primableIdGenerator = {
  generateTraceId: (): string => randomHex(16),
  generateSpanId: (): string => {
    const id = primed;
    if (id === undefined) return newSpanId();
    primed = undefined;
    return id;
  },
};

/** Makes a span (`make` calls the SDK's startSpan once) with the span id given. */
export function withSpanId<T>(spanId: string, make: () => T): T {
  primed = spanId;
  try {
    return make();
  } finally {
    primed = undefined;
  }
}

const primable = new WeakSet<object>();

/** The composition root's provider uses `primableIdGenerator`. */
export function markPrimable(provider: object): void {
  primable.add(provider);
}

/** Whether the registered provider takes primed span ids (is codecall's own). */
export function primableRegistered(): boolean {
  const provider = trace.getTracerProvider();
  const delegate = provider instanceof ProxyTracerProvider ? provider.getDelegate() : provider;
  return primable.has(delegate);
}
