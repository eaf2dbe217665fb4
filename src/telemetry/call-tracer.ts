import { ROOT_CONTEXT, context, trace } from '@opentelemetry/api';
import type { Context, Span } from '@opentelemetry/api';
import type {
  ExecutionHost,
  HostCall,
  HostOutcome,
  JournalEntryInput,
  LogEntry,
  ToolEffect,
  TraceContext,
} from '../spec/index.ts';
import { contextOf, traceContextOfSpan } from './trace-context.ts';
import { contentAttribute, setDefined, setErrorCode, tracer, tracingRegistered } from './tracer.ts';

/** Replayed calls get a zero-length span each, up to this many per execution (the rest are counted). */
export const MAX_REPLAYED_SPANS = 1_000;

export interface CallTracerOptions {
  /** This execution's recorded entries (`ExecutionJournal.recorded`): their outcomes are replayed, not run. */
  readonly recorded: readonly JournalEntryInput[];
  /** The effect of a call's tool, for `codecall.tool.effect`. */
  readonly effectOf?: (call: HostCall) => ToolEffect | undefined;
  /**
   * The caller's trace context kept with the task. Without a provider no span is made, so a tool gets this one as
   * its `ctx.traceContext` (and, with a context manager registered, egress and MCP requests carry it): a tool that
   * calls another traced system propagates the caller's trace even when codecall exports nothing.
   */
  readonly traceContext?: TraceContext;
}

interface Recorded {
  readonly tool: string;
  ok?: boolean;
  error?: string;
  approval?: { decision: string; actor: string };
}

/**
 * The spans of one execution's tool calls (`execute_tool {name}`, GenAI conventions), made around the
 * JournalingHost without changing it: the host the driver sees opens a call's span, the live host inside it runs
 * the tool under that span (so `ctx.traceContext`, egress and MCP requests carry it), and the journal's appends
 * say what happened between (an approval asked, a refusal). Calls the journal already holds are replayed, not run:
 * each gets a zero-length span marked `codecall.replayed`, made when the execution begins (a driver's replay script
 * serves them without asking the host), never timed as if it ran.
 */
export class CallTracer {
  private parent: Context = ROOT_CONTEXT;
  private readonly open = new Map<string, Span>();
  private readonly recorded = new Map<string, Recorded>();

  /** No provider registered: the tracer stays out of the way (no journal scan, no wrappers). */
  private readonly off = !tracingRegistered();

  constructor(private readonly options: CallTracerOptions) {
    if (this.off) return;
    for (const e of options.recorded) {
      if (e.type === 'tool_intent') this.recorded.set(e.data.call_id, { tool: e.data.tool });
      else if (e.type === 'tool_outcome') {
        const r = this.recorded.get(e.data.call_id);
        if (r) {
          r.ok = e.data.ok;
          if (!e.data.ok) r.error = errorCodeOf(e.data.payload);
        }
      } else if (e.type === 'approval_decision') {
        const r = this.recorded.get(e.data.approval_id);
        if (r) r.approval = { decision: e.data.decision, actor: e.data.actor };
      }
    }
  }

  /** The execution begins under `parent` (its sandbox span): the replayed calls' spans are made now. */
  begin(parent: Context): void {
    if (this.off) return;
    this.parent = parent;
    if (!trace.getSpan(parent)?.isRecording()) return;
    let made = 0;
    for (const [callId, r] of this.recorded) {
      if (r.ok === undefined) continue;
      if (made++ >= MAX_REPLAYED_SPANS) break;
      const now = Date.now();
      const span = tracer().startSpan(
        `execute_tool ${r.tool}`,
        { startTime: now, attributes: toolAttributes(r.tool, callId, true) },
        parent,
      );
      if (r.ok === false) setErrorCode(span, r.error ?? 'TOOL_ERROR');
      span.end(now);
    }
  }

  /** The host the driver calls: each call not replayed from the journal is a span until it settles. */
  host(inner: ExecutionHost): ExecutionHost {
    if (this.off) return inner;
    const traced: ExecutionHost = {
      call: (call, signal) => this.call(inner, call, signal),
      onReplayDone: () => inner.onReplayDone?.(),
    };
    return inner.onLog ? { ...traced, onLog: (entry: LogEntry) => inner.onLog?.(entry) } : traced;
  }

  /** The host that runs tools: the call's span is the active one while its tool runs, and `ctx` carries it. */
  live(inner: ExecutionHost): ExecutionHost {
    if (this.off) return this.passThrough(inner);
    const traced: ExecutionHost = {
      call: (call, signal) => {
        const span = this.open.get(call.callId);
        if (!span) return inner.call(call, signal);
        // The span is the active one while the tool runs (its egress and MCP requests carry it), and ctx has it.
        const ctx = trace.setSpan(this.parent, span);
        const served =
          call.kind === 'tool' ? { ...call, traceContext: traceContextOfSpan(span.spanContext()) } : call;
        return context.with(ctx, () => inner.call(served, signal));
      },
    };
    return inner.onLog ? { ...traced, onLog: (entry: LogEntry) => inner.onLog?.(entry) } : traced;
  }

  /** No provider: the caller's trace context, if the task has one, goes to tools as it came (no span between). */
  private passThrough(inner: ExecutionHost): ExecutionHost {
    const tc = this.options.traceContext;
    if (!tc) return inner;
    const ctx = contextOf(tc);
    const traced: ExecutionHost = {
      call: (call, signal) =>
        call.kind === 'tool'
          ? context.with(ctx, () => inner.call({ ...call, traceContext: tc }, signal))
          : inner.call(call, signal),
    };
    return inner.onLog ? { ...traced, onLog: (entry: LogEntry) => inner.onLog?.(entry) } : traced;
  }

  /** The journal's appends, watched for what happens to a call between its start and its end. */
  append(
    inner: (entries: readonly JournalEntryInput[]) => Promise<void>,
  ): (entries: readonly JournalEntryInput[]) => Promise<void> {
    if (this.off) return inner;
    return (entries) => {
      for (const e of entries) this.observe(e);
      return inner(entries);
    };
  }

  /** The execution ended: calls still open wait for a human (approval, input) or were cut off. */
  end(): void {
    for (const span of this.open.values()) {
      span.setAttribute('codecall.call.unfinished', true);
      span.end();
    }
    this.open.clear();
  }

  private call(inner: ExecutionHost, call: HostCall, signal: AbortSignal): Promise<HostOutcome> {
    const r = this.recorded.get(call.callId);
    // Served from the journal (a driver without a replay script asks the host for it): its span was made at begin.
    if (r?.ok !== undefined || call.kind !== 'tool' || this.open.has(call.callId)) {
      return inner.call(call, signal);
    }
    const tool = `${call.namespace}.${call.name}`;
    const span = tracer().startSpan(
      `execute_tool ${tool}`,
      { attributes: toolAttributes(tool, call.callId, false) },
      this.parent,
    );
    if (!span.isRecording()) {
      // Not sampled (or no provider): the context still travels, so a caller's trace reaches the tool.
      this.open.set(call.callId, span);
      const served = inner.call(call, signal);
      const forget = () => this.open.delete(call.callId);
      served.then(forget, forget);
      return served;
    }
    setDefined(span, {
      'codecall.tool.effect': this.options.effectOf?.(call),
      'gen_ai.tool.call.arguments': contentAttribute(call.argsJson),
    });
    if (r?.approval) {
      span.addEvent('codecall.approval.decided', {
        'codecall.approval.decision': r.approval.decision,
        'codecall.approval.actor': r.approval.actor,
      });
    }
    this.open.set(call.callId, span);
    // The span ends on a side branch: the driver awaits the host's own promise, with no hop added before delivery.
    const served = inner.call(call, signal);
    served.then(
      (outcome) => {
        if (!outcome.ok) setErrorCode(span, outcome.error.code, outcome.error.message);
        this.close(call.callId, span);
      },
      (error: unknown) => {
        setErrorCode(span, 'INTERNAL', String(error));
        this.close(call.callId, span);
      },
    );
    return served;
  }

  private close(callId: string, span: Span): void {
    if (this.open.get(callId) === span) this.open.delete(callId);
    span.end();
  }

  private observe(e: JournalEntryInput): void {
    if (e.type === 'approval_request') {
      this.open.get(e.data.call_id)?.addEvent('codecall.approval.requested', {
        ...(e.data.expires_at === undefined ? {} : { 'codecall.approval.expires_at': e.data.expires_at }),
      });
    } else if (e.type === 'input_request') {
      const id = e.data.for_call ?? e.data.call_id;
      this.open.get(id)?.addEvent('codecall.input.requested', { 'codecall.input.name': e.data.name });
    } else if (e.type === 'tool_intent' && e.data.over_budget !== undefined) {
      this.open.get(e.data.call_id)?.setAttribute('codecall.tool.refused', e.data.over_budget);
    } else if (e.type === 'control' && e.data.action === 'approved_call_started') {
      this.open.get(e.data.call_id)?.addEvent('codecall.approval.started');
    }
  }
}

function toolAttributes(tool: string, callId: string, replayed: boolean) {
  return {
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': tool,
    'gen_ai.tool.call.id': callId,
    'codecall.replayed': replayed,
  };
}

/** The code of a journaled failure (its payload is the SerializedError's JSON). */
function errorCodeOf(payload: string): string | undefined {
  try {
    const e = JSON.parse(payload) as { code?: unknown };
    return typeof e.code === 'string' ? e.code : undefined;
  } catch {
    return undefined;
  }
}
