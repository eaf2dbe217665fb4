import { ROOT_CONTEXT, context, isSpanContextValid, trace } from '@opentelemetry/api';
import type { Context, Span, SpanContext, Tracer } from '@opentelemetry/api';
import type {
  ExecutionHost,
  HostCall,
  HostOutcome,
  JournalEntryInput,
  LogEntry,
  ToolEffect,
  TraceContext,
} from '../spec/index.ts';
import { DeferredSpan } from './deferred-span.ts';
import { newSpanId, primableRegistered, withSpanId } from './span-ids.ts';
import { contextOf, traceContextOfSpan } from './trace-context.ts';
import { contentAttribute, setErrorCode, tracer, tracingRegistered } from './tracer.ts';

/** Replayed calls get a zero-length span each, up to this many per execution (the rest are counted). */
export const MAX_REPLAYED_SPANS = 1_000;

/** How long settled calls' spans wait for a moment without a call under way (see endWhenIdle). */
const MAX_HELD_SPANS = 64;
const MAX_HELD_TURNS = 4;

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

/** A live call under way (or settled, its span not ended yet). */
interface OpenCall {
  readonly call: HostCall;
  readonly span: DeferredSpan;
  /** performance.now() at the call's arrival and at its outcome. */
  readonly startedAt: number;
  endedAt?: number;
  error?: { code: string; message: string } | undefined;
  /** A decision journaled in an earlier run (the call runs now, approved). */
  readonly approval: { decision: string; actor: string } | undefined;
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
  private readonly open = new Map<string, OpenCall>();
  private readonly recorded = new Map<string, Recorded>();
  /** Calls settled whose spans are ended after the outcome went out (settle), and whether that is scheduled. */
  private settled: OpenCall[] = [];
  private ending = false;
  private held = 0;
  /** The parent's part of a call's span context when span ids can be primed (codecall's provider): see begin. */
  private primedParent: Omit<SpanContext, 'spanId'> | undefined;
  /** The tracer, looked up once per execution (the API's lookup builds a key and searches a map). */
  private tracer: Tracer | undefined;

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
    // A call's span context, before its span is made: the parent's trace, flags and state with a new span id.
    // The six standard samplers decide a child of a local parent as they decided the parent.
    const sc = trace.getSpanContext(parent);
    if (sc && isSpanContextValid(sc) && primableRegistered()) {
      this.primedParent = {
        traceId: sc.traceId,
        traceFlags: sc.traceFlags,
        ...(sc.traceState ? { traceState: sc.traceState } : {}),
      };
    }
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
        const span = this.open.get(call.callId)?.span;
        if (!span) return inner.call(call, signal);
        // The span is the active one while the tool runs (its egress and MCP requests carry it), and ctx has it.
        // Its context is known before the span is made (a primed id), so neither makes it on the call's path.
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
    this.endSettled();
    for (const open of this.open.values()) {
      const span = this.finish(open);
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
    // Only the start time and a span id are taken on the call's way in; the SDK's span is made after the
    // outcome went out (settle), with that id. With a provider that cannot take the id, it is made now.
    const startedAt = performance.now();
    const t = (this.tracer ??= tracer());
    const parent = this.parent;
    const tool = `${call.namespace}.${call.name}`;
    const make = () =>
      t.startSpan(
        `execute_tool ${tool}`,
        { attributes: toolAttributes(tool, call.callId, false), startTime: startedAt },
        parent,
      );
    const base = this.primedParent;
    const known: SpanContext | undefined = base
      ? {
          traceId: base.traceId,
          spanId: newSpanId(),
          traceFlags: base.traceFlags,
          traceState: base.traceState,
        }
      : undefined;
    const span = known
      ? new DeferredSpan(() => withSpanId(known.spanId, make), known)
      : new DeferredSpan(make);
    if (!known) void span.span;
    const open: OpenCall = { call, span, startedAt, approval: r?.approval };
    this.open.set(call.callId, open);
    // The driver awaits the host's own promise: no hop is added before the outcome is delivered.
    const served = inner.call(call, signal);
    served.then(
      (outcome) => this.settle(open, outcome.ok ? undefined : outcome.error),
      (error: unknown) => this.settle(open, { code: 'INTERNAL', message: String(error) }),
    );
    return served;
  }

  /**
   * A call settled: its end time is taken now; the rest (making the span if nothing asked for it, the attributes
   * known at the end, `span.end`, the span processor, an export when a batch is full) is done in one batch on the
   * next turn of the event loop, once the outcome has gone to the guest. On the answer path it would hold up the
   * guest's next call, and a quickjs worker spinning for its answer stops spinning past 250 us (ADR 0007).
   */
  private settle(open: OpenCall, error: { code: string; message: string } | undefined): void {
    // Ended with the execution already (end(): a call given up past the settle time).
    if (this.open.get(open.call.callId) !== open) return;
    this.open.delete(open.call.callId);
    open.endedAt = performance.now();
    open.error = error;
    this.settled.push(open);
    if (!this.ending) {
      this.ending = true;
      setImmediate(this.endWhenIdle);
    }
  }

  /**
   * Ends the settled calls' spans once no call of this execution is under way: on a loaded machine the guest's next
   * call can arrive before the event loop's next check phase, and its journal commit would then wait behind the
   * spans. While calls overlap (a Promise.all, a slow tool) the spans wait MAX_HELD_TURNS turns at most.
   */
  private readonly endWhenIdle = (): void => {
    // Bounded: a call that runs long (a slow tool beside a fast one) must not keep the event loop turning.
    if (this.open.size > 0 && this.held++ < MAX_HELD_TURNS && this.settled.length < MAX_HELD_SPANS) {
      setImmediate(this.endWhenIdle);
      return;
    }
    this.ending = false;
    this.held = 0;
    this.endSettled();
  };

  private readonly endSettled = (): void => {
    if (this.settled.length === 0) return;
    const settled = this.settled;
    this.settled = [];
    for (const open of settled) {
      const span = this.finish(open);
      if (open.error) setErrorCode(span, open.error.code, open.error.message);
      span.end(open.endedAt);
    }
  };

  /** The span of a call at its end, with what is known of the call by then (recorded spans only). */
  private finish(open: OpenCall): Span {
    const span = open.span.span;
    if (!span.isRecording()) return span;
    const effect = this.options.effectOf?.(open.call);
    if (effect !== undefined) span.setAttribute('codecall.tool.effect', effect);
    const args = open.call.kind === 'tool' ? contentAttribute(open.call.argsJson) : undefined;
    if (args !== undefined) span.setAttribute('gen_ai.tool.call.arguments', args);
    if (open.approval) {
      const { decision, actor } = open.approval;
      span.addEvent(
        'codecall.approval.decided',
        { 'codecall.approval.decision': decision, 'codecall.approval.actor': actor },
        open.startedAt,
      );
    }
    return span;
  }

  private observe(e: JournalEntryInput): void {
    if (e.type === 'approval_request') {
      this.open.get(e.data.call_id)?.span.addEvent('codecall.approval.requested', {
        ...(e.data.expires_at === undefined ? {} : { 'codecall.approval.expires_at': e.data.expires_at }),
      });
    } else if (e.type === 'input_request') {
      const id = e.data.for_call ?? e.data.call_id;
      this.open.get(id)?.span.addEvent('codecall.input.requested', { 'codecall.input.name': e.data.name });
    } else if (e.type === 'tool_intent' && e.data.over_budget !== undefined) {
      this.open.get(e.data.call_id)?.span.setAttribute('codecall.tool.refused', e.data.over_budget);
    } else if (e.type === 'control' && e.data.action === 'approved_call_started') {
      this.open.get(e.data.call_id)?.span.addEvent('codecall.approval.started');
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
