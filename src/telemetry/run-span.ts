import { context, trace } from '@opentelemetry/api';
import type { Link, Span } from '@opentelemetry/api';
import type { JournalEntry, JournalEntryInput, TaskRecord } from '../spec/index.ts';
import { withTaskId } from './log-context.ts';
import { contextOf } from './trace-context.ts';
import { setDefined, setErrorCode, tracer } from './tracer.ts';

/** Earlier runs a run's span links to, at most (the latest ones). */
export const MAX_RUN_LINKS = 32;

/** What a task's run does with its span once it has read its journal. */
export interface RunTrace {
  /** Links the span to the earlier runs' spans (their `attempt` entries say them) and counts the resume. */
  linkEarlier(journal: readonly JournalEntry[]): void;
  /** The entries with this run's `attempt` naming its span, for the next run to link to. */
  stamp(entries: readonly JournalEntryInput[]): JournalEntryInput[];
}

/**
 * A task's run (one claim: the first run, a resume, a recovery) as a span, `codecall.task.run`, whose parent is
 * the trace context its caller sent with the task (kept with it, so a run claimed later or by another server
 * joins the caller's trace) and which links to the spans of the task's earlier runs.
 */
export async function traceRun(
  task: TaskRecord,
  run: (trace: RunTrace) => Promise<TaskRecord>,
): Promise<TaskRecord> {
  const input = task.input;
  const parent = withTaskId(contextOf(input.traceContext, context.active()), task.id);
  const span = tracer().startSpan(
    'codecall.task.run',
    {
      attributes: {
        'codecall.task.id': task.id,
        'codecall.task.kind': input.kind,
        'codecall.tenant': task.tenant,
        'codecall.task.attempts': task.attempts,
        ...(input.kind === 'instruction'
          ? { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'codecall' }
          : {}),
      },
    },
    parent,
  );
  const ctx = trace.setSpan(parent, span);
  try {
    const ended = await context.with(ctx, () => run(runTrace(span)));
    if (span.isRecording()) {
      setDefined(span, {
        'codecall.task.status': ended.status,
        'codecall.task.pause_reason': ended.pauseReason ?? undefined,
      });
      if (ended.status === 'failed' && ended.error) setErrorCode(span, ended.error.code, ended.error.message);
    }
    return ended;
  } catch (e) {
    setErrorCode(span, 'INTERNAL', String(e));
    throw e;
  } finally {
    span.end();
  }
}

function runTrace(span: Span): RunTrace {
  const sc = span.spanContext();
  return {
    linkEarlier(journal) {
      if (!span.isRecording()) return;
      const links: Link[] = [];
      for (const e of journal) {
        if (e.type !== 'control' || e.data.action !== 'attempt' || !e.data.trace) continue;
        const { trace_id: traceId, span_id: spanId } = e.data.trace;
        links.push({ context: { traceId, spanId, traceFlags: 1, isRemote: true } });
      }
      const resumed = journal.some((e) => e.type === 'control' && e.data.action === 'attempt');
      span.setAttribute('codecall.task.resumed', resumed);
      span.addLinks(links.slice(-MAX_RUN_LINKS));
    },
    stamp(entries) {
      if (!span.isRecording()) return [...entries];
      return entries.map((e) =>
        e.type === 'control' && e.data.action === 'attempt'
          ? { ...e, data: { ...e.data, trace: { trace_id: sc.traceId, span_id: sc.spanId } } }
          : e,
      );
    },
  };
}
