// Tracing over @opentelemetry/api only: a no-op until the service or CLI registers a provider (ADR 0053).
export { CallTracer, MAX_REPLAYED_SPANS } from './call-tracer.ts';
export type { CallTracerOptions } from './call-tracer.ts';
export { traceExecution } from './execution-span.ts';
export type { ExecutionSpanInput } from './execution-span.ts';
export {
  contextOf,
  parseTraceHeaders,
  traceContextOf,
  withTraceHeaderList,
  withTraceHeaders,
} from './trace-context.ts';
export { TRACER_NAME, contentAttribute, setTraceContent, tracer } from './tracer.ts';
export type { TraceContentSettings } from './tracer.ts';
export { logFields, withTaskId } from './log-context.ts';
export { MAX_RUN_LINKS, traceRun } from './run-span.ts';
export type { RunTrace } from './run-span.ts';
export { traceAgentStep, traceModelRequest } from './model-span.ts';
export type { ModelSpanInput } from './model-span.ts';
export { markPrimable, primableIdGenerator } from './span-ids.ts';
