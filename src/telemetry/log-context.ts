import { context, createContextKey, isSpanContextValid, trace } from '@opentelemetry/api';
import type { Context } from '@opentelemetry/api';

const TASK_ID = createContextKey('codecall.task_id');

/** The context of a task's run: log lines written in it name the task (`logFields`). */
export function withTaskId(ctx: Context, taskId: string): Context {
  return ctx.setValue(TASK_ID, taskId);
}

/**
 * What a structured log line says of where it was written: the task, the trace and the span, when the line was
 * written inside them (the context manager the service registers carries them through async calls).
 */
export function logFields(ctx: Context = context.active()): Record<string, string> {
  const fields: Record<string, string> = {};
  const taskId = ctx.getValue(TASK_ID);
  if (typeof taskId === 'string') fields.task_id = taskId;
  const sc = trace.getSpanContext(ctx);
  if (sc && isSpanContextValid(sc)) {
    fields.trace_id = sc.traceId;
    fields.span_id = sc.spanId;
  }
  return fields;
}
