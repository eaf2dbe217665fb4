/**
 * W3C Trace Context (`traceparent`, `tracestate`): a task's caller's (the API request's headers, the parent of
 * the task's run spans wherever and whenever it runs) or a tool call's (`ToolContext.traceContext`), ADR 0053.
 */
export interface TraceContext {
  readonly traceparent: string;
  readonly tracestate?: string;
}
