import { ProxyTracerProvider, trace } from '@opentelemetry/api';
import type { Attributes, Span, Tracer } from '@opentelemetry/api';
import { SpanStatusCode } from '@opentelemetry/api';

/** The instrumentation scope every codecall span is made under. */
export const TRACER_NAME = 'codecall';

/**
 * The global tracer, looked up per use: `@opentelemetry/api` hands out a proxy that turns into the registered
 * provider's tracer once one is registered (the service or CLI, ADR 0053) and is a no-op until then.
 */
export function tracer(): Tracer {
  return trace.getTracer(TRACER_NAME);
}

/**
 * Whether a provider is registered (the service's or the CLI's SDK): without one every span is a no-op, so what
 * only feeds spans (reading the journal for replayed calls, wrapping each call) can be skipped.
 */
export function tracingRegistered(): boolean {
  const provider = trace.getTracerProvider();
  return !(provider instanceof ProxyTracerProvider) || provider.getDelegateTracer(TRACER_NAME) !== undefined;
}

/** Whether program source and argument values go into spans (`otelIncludeContent`), and how much of each. */
export interface TraceContentSettings {
  readonly include: boolean;
  readonly maxBytes: number;
}

let content: TraceContentSettings = { include: false, maxBytes: 0 };

/** Set once by the composition root (the service or CLI) with the provider; off by default. */
export function setTraceContent(settings: TraceContentSettings): void {
  content = settings;
}

/**
 * Content for an attribute when the operator asked for it, cut to the size cap (by characters, marked with
 * the original length); undefined when content is off, so nothing of a program or its arguments leaks by default.
 */
export function contentAttribute(text: string | undefined): string | undefined {
  if (!content.include || text === undefined) return undefined;
  if (text.length <= content.maxBytes) return text;
  return `${text.slice(0, content.maxBytes)}… (${text.length} characters)`;
}

/** Sets the attributes that are defined (OpenTelemetry drops undefined ones anyway; this keeps call sites flat). */
export function setDefined(span: Span, attributes: Record<string, Attributes[string]>): void {
  for (const [k, v] of Object.entries(attributes)) if (v !== undefined) span.setAttribute(k, v);
}

/** Marks a span failed with a codecall error code (`error.type` by the semantic conventions, and ours). */
export function setErrorCode(span: Span, code: string, message?: string): void {
  span.setAttribute('error.type', code);
  span.setAttribute('codecall.error.code', code);
  span.setStatus({ code: SpanStatusCode.ERROR, ...(message === undefined ? {} : { message }) });
}
