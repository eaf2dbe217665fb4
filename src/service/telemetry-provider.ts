import { context, propagation, trace } from '@opentelemetry/api';
import type { ContextManager } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-base';
import type { Sampler } from '@opentelemetry/sdk-trace-base';
import { markPrimable, primableIdGenerator, setTraceContent } from '../telemetry/index.ts';
import type { OtelSettings } from './config-otel.ts';

/** A registered tracer provider: `shutdown` exports what is buffered (bounded in time) and unregisters it. */
export interface Telemetry {
  forceFlush(): Promise<void>;
  shutdown(): Promise<void>;
}

/** How long a shutdown waits for the last spans to be exported (a receiver that is down must not hold an exit). */
export const TELEMETRY_SHUTDOWN_MS = 5_000;

let contextManager: ContextManager | null = null;

/**
 * The context manager that carries the active span (and the task id of log lines) through async calls. Registered
 * once per process, by tracing or by the JSON log, whichever comes first.
 */
export function ensureContextManager(): void {
  if (contextManager) return;
  const manager = new AsyncLocalStorageContextManager().enable();
  if (context.setGlobalContextManager(manager)) contextManager = manager;
}

function samplerOf(settings: OtelSettings): Sampler {
  const ratio = new TraceIdRatioBasedSampler(settings.ratio);
  switch (settings.sampler) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return ratio;
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratio });
  }
}

/**
 * The trace SDK as the service and the CLI run it (ADR 0053): a BasicTracerProvider with a BatchSpanProcessor
 * over the OTLP/HTTP exporter (protobuf by default, JSON if asked), the W3C propagator and the async-hooks context manager, registered as the
 * API's globals, so the core's `@opentelemetry/api` calls start recording. Null settings: nothing is registered.
 */
export function startTelemetry(
  settings: OtelSettings | null,
  options: { readonly version?: string; readonly scheduledDelayMs?: number } = {},
): Telemetry | null {
  if (settings === null) return null;
  ensureContextManager();
  const exporterOptions = { url: settings.url, headers: { ...settings.headers } };
  const exporter =
    settings.protocol === 'http/json'
      ? new JsonExporter(exporterOptions)
      : new ProtobufExporter(exporterOptions);
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({
      'service.name': settings.serviceName,
      'service.version': options.version ?? '0.0.0',
    }),
    sampler: samplerOf(settings),
    // Span ids can be chosen before the span is made: a tool call's span is made off the call's path (ADR 0053).
    idGenerator: primableIdGenerator,
    spanProcessors: [
      new BatchSpanProcessor(exporter, {
        ...(options.scheduledDelayMs === undefined ? {} : { scheduledDelayMillis: options.scheduledDelayMs }),
      }),
    ],
  });
  markPrimable(provider);
  trace.setGlobalTracerProvider(provider);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  setTraceContent({ include: settings.includeContent, maxBytes: settings.contentMaxBytes });
  let closed: Promise<void> | null = null;
  return {
    forceFlush: () => provider.forceFlush(),
    shutdown() {
      closed ??= (async () => {
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, TELEMETRY_SHUTDOWN_MS)));
        await Promise.race([provider.shutdown().catch(() => undefined), late]);
        clearTimeout(timer);
        trace.disable();
        propagation.disable();
        setTraceContent({ include: false, maxBytes: 0 });
      })();
      return closed;
    },
  };
}
