import { EncodedValue, encodeOutcome, encodeValue } from '../codec/index.ts';
import { CodecallError } from '../errors/index.ts';
import type {
  ExecutionHost,
  HostCall,
  HostOutcome,
  JournalEntryInput,
  LogEntry,
  SerializedError,
  ToolEffect,
} from '../spec/index.ts';

export interface JournalingHostOptions {
  /** Runs the calls the journal has no outcome for. */
  readonly live: ExecutionHost;
  /** This execution's earlier `tool_intent` / `tool_outcome` entries, in journal order. */
  readonly recorded: readonly JournalEntryInput[];
  /** Makes entries durable; an outcome is delivered only after its entry is committed. */
  append(entries: readonly JournalEntryInput[]): Promise<void>;
  /** What a call does to the world; decides whether an interrupted call may run again. */
  effectOf(call: HostCall): ToolEffect;
  /** Epoch ms for live deliveries. */
  clock(): number;
  /** Whether this call must be approved by a human before it runs. */
  needsApproval?(call: HostCall): boolean;
  /** A call waits for approval: the runner pauses the execution (after collecting the others of this turn). */
  onApprovalRequired?(): void;
  /** Prefix of the idempotency keys given to tool calls (`task:block`); the call id completes the key. */
  readonly keyPrefix?: string;
  /** The execution cannot go on (divergence, an unsafe call in doubt): the runner aborts it with this error. */
  onFatal(error: CodecallError): void;
}

interface Recorded {
  readonly callId: string;
  readonly outcome: HostOutcome;
}

const never = new Promise<HostOutcome>(() => undefined);

/**
 * The host side of a journaled execution. Recorded outcomes are served from the journal in their recorded
 * delivery order (so `Promise.all` replays exactly); calls past the journal run live, with the intent committed
 * before the tool runs and the outcome committed before the guest sees it. Live outcomes wait until every
 * recorded one has been delivered.
 */
export class JournalingHost implements ExecutionHost {
  private readonly intents = new Map<string, { tool: string; args: string }>();
  private readonly outcomes: Recorded[] = [];
  private readonly position = new Map<string, number>();
  private readonly waiting = new Map<number, (outcome: HostOutcome) => void>();
  private readonly drained: (() => void)[] = [];
  private next = 0;
  /** The driver served the recorded outcomes from a replay script and has handed over the last one. */
  private scriptDone = false;
  private drainScheduled = false;
  private readonly inFlight = new Set<Promise<HostOutcome>>();
  private readonly byCall = new Map<string, Promise<HostOutcome>>();
  private readonly requested = new Set<string>();
  /** Approved calls that began running: after a crash their effect decides, as for any lost call. */
  private readonly started = new Set<string>();
  private readonly decisions = new Map<string, { decision: string; reason: string }>();
  private commits: Promise<void> = Promise.resolve();
  readonly onLog?: (entry: LogEntry) => void;

  constructor(private readonly options: JournalingHostOptions & { onLog?: (entry: LogEntry) => void }) {
    const onLog = options.onLog;
    // Lines the program printed before the interruption were streamed then; during the replay they are not
    // streamed again (the execution's own log still holds them all).
    if (onLog) this.onLog = (entry) => (this.replayDone ? onLog(entry) : undefined);
    for (const entry of options.recorded) {
      const d = entry.data as Record<string, unknown>;
      const callId = String(d.call_id);
      if (entry.type === 'tool_intent')
        this.intents.set(callId, { tool: String(d.tool), args: String(d.args) });
      if (entry.type === 'approval_request') this.requested.add(String(d.approval_id));
      if (entry.type === 'control' && d.action === 'approved_call_started')
        this.started.add(String(d.call_id));
      if (entry.type === 'approval_decision') {
        this.decisions.set(String(d.approval_id), {
          decision: String(d.decision),
          reason: typeof d.reason === 'string' ? d.reason : '',
        });
      }
      if (entry.type === 'tool_outcome') {
        this.position.set(callId, this.outcomes.length);
        this.outcomes.push({ callId, outcome: toOutcome(d) });
      }
    }
  }

  /** True once every recorded outcome has been delivered: the execution is live from here. */
  get replayDone(): boolean {
    return this.scriptDone || this.next >= this.outcomes.length;
  }

  /**
   * The driver served the recorded outcomes itself (`ExecutionRequest.replay`): the execution is live from here.
   * Calls it did not serve still come to `call()`: divergent ones (checked against the intents) and lost ones.
   */
  onReplayDone(): void {
    this.scriptDone = true;
    for (const release of this.drained.splice(0)) release();
  }

  call(call: HostCall, signal: AbortSignal): Promise<HostOutcome> {
    const { tool, args } = wireForm(call);
    const recorded = this.intents.get(call.callId);
    if (recorded) {
      if (recorded.tool !== tool || recorded.args !== args) {
        return this.fatal(
          'REPLAY_DIVERGENCE',
          `${call.callId}: the journal has ${describe(recorded.tool, recorded.args)}, the program now calls ${describe(tool, args)}`,
          { call_id: call.callId, journal: recorded, now: { tool, args } },
        );
      }
      const pos = this.position.get(call.callId);
      if (pos !== undefined) {
        return new Promise((resolve) => {
          this.waiting.set(pos, resolve);
          this.scheduleDrain();
        });
      }
      // A call that waited for approval has an intent and no outcome: it goes on to its decision, unless it was
      // approved and had started running (then it is a lost call like any other).
      if (this.requested.has(call.callId) && !this.started.has(call.callId))
        return this.runLive(call, signal, null);
      // The intent was committed but its outcome was lost (a crash while the call ran).
      const effect = this.options.effectOf(call);
      if (effect === 'unsafe') {
        return this.fatal(
          'NEEDS_ATTENTION',
          `${call.callId}: ${tool} may or may not have run before the interruption and is not safe to repeat`,
          { call_id: call.callId, tool, args },
        );
      }
      return this.runLive(call, signal, null);
    }
    return this.runLive(call, signal, { tool, args });
  }

  /**
   * Resolves once every live call has journaled its outcome (or was given up), or after `timeoutMs`: an
   * execution that was paused keeps the results of the calls that were already running.
   */
  async idle(timeoutMs: number): Promise<void> {
    if (this.inFlight.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled([...this.inFlight]),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs))),
    ]);
    clearTimeout(timer);
  }

  /** `intent` is journaled first unless the journal already has it (null). */
  private runLive(call: HostCall, signal: AbortSignal, intent: Wire | null): Promise<HostOutcome> {
    const running = this.live(call, signal, intent);
    this.inFlight.add(running);
    this.byCall.set(call.callId, running);
    void running
      .finally(() => {
        this.inFlight.delete(running);
        this.byCall.delete(call.callId);
      })
      .catch(() => undefined);
    return running;
  }

  private async live(call: HostCall, signal: AbortSignal, intent: Wire | null): Promise<HostOutcome> {
    const key =
      call.kind === 'tool' && this.options.keyPrefix ? `${this.options.keyPrefix}:${call.callId}` : undefined;
    if (intent) {
      const data = {
        call_id: call.callId,
        tool: intent.tool,
        args: intent.args,
        ...(key === undefined ? {} : { idempotency_key: key }),
      };
      await this.commit([{ type: 'tool_intent', data }]);
    }
    if (call.kind === 'tool' && this.options.needsApproval?.(call)) {
      const decision = this.decisions.get(call.callId);
      if (!decision) {
        if (!this.requested.has(call.callId)) {
          this.requested.add(call.callId);
          const { tool, args } = wireForm(call);
          const data = { approval_id: call.callId, call_id: call.callId, tool, args };
          await this.commit([{ type: 'approval_request', data }]);
        }
        // Waiting for a human is not work in flight: a pause need not wait for it.
        const running = this.byCall.get(call.callId);
        if (running) this.inFlight.delete(running);
        this.options.onApprovalRequired?.();
        return never;
      }
      if (decision.decision !== 'approve') {
        const reason = decision.reason ? `: ${decision.reason}` : '';
        const message = `${call.namespace}.${call.name} was rejected${reason}`;
        const rejected: HostOutcome = {
          ok: false,
          error: { code: 'TOOL_REJECTED', name: 'ToolRejectedError', message },
        };
        return this.finishLive(call, signal, rejected);
      }
    }
    if (this.requested.has(call.callId)) {
      this.started.add(call.callId);
      await this.commit([
        { type: 'control', data: { action: 'approved_call_started', call_id: call.callId } },
      ]);
    }
    const keyed: HostCall =
      call.kind === 'tool' && key !== undefined ? { ...call, idempotencyKey: key } : call;
    return this.finishLive(call, signal, await this.options.live.call(keyed, signal));
  }

  private async finishLive(call: HostCall, signal: AbortSignal, outcome: HostOutcome): Promise<HostOutcome> {
    if (signal.aborted && !outcome.ok) {
      // The execution ended (pause, cancel, timeout) and the tool gave up: nothing is known of its effect, so
      // nothing is journaled; a resume re-runs it if its effect allows, or asks a human.
      return outcome;
    }
    if (!signal.aborted) await this.whenDrained();
    const clock = this.options.clock();
    const { ok, payload } = encodeOutcome(
      outcome,
      call.kind === 'timer' ? 'a timer' : `${call.namespace}.${call.name}`,
    );
    await this.commit([{ type: 'tool_outcome', data: { call_id: call.callId, ok, payload, clock } }]);
    return { ...toOutcome({ ok, payload }), clock };
  }

  /** Commits run one after another, so outcomes are journaled in the order they are delivered. */
  private commit(entries: readonly JournalEntryInput[]): Promise<void> {
    const done = this.commits.then(() => this.options.append(entries));
    this.commits = done.catch(() => undefined);
    return done;
  }

  /**
   * Settles in a later task, never inside `call()`: a caller awaits the promise only after `call()` returns, and
   * settling earlier would queue its continuation behind those of promises settled later (wrong order).
   */
  private scheduleDrain(): void {
    if (this.drainScheduled) return;
    this.drainScheduled = true;
    setImmediate(() => {
      this.drainScheduled = false;
      this.drain();
    });
  }

  private drain(): void {
    for (;;) {
      const resolve = this.waiting.get(this.next);
      if (!resolve) break;
      this.waiting.delete(this.next);
      const recorded = this.outcomes[this.next];
      this.next += 1;
      if (recorded) resolve(recorded.outcome);
    }
    if (this.replayDone) for (const release of this.drained.splice(0)) release();
  }

  private whenDrained(): Promise<void> {
    return this.replayDone ? Promise.resolve() : new Promise((resolve) => this.drained.push(resolve));
  }

  private fatal(
    code: 'REPLAY_DIVERGENCE' | 'NEEDS_ATTENTION',
    message: string,
    details: Record<string, unknown>,
  ) {
    this.options.onFatal(new CodecallError(code, message, { details }));
    return never;
  }
}

interface Wire {
  readonly tool: string;
  readonly args: string;
}

/** How a call is named and its arguments written in the journal; the driver's wire text when it has one. */
function wireForm(call: HostCall): Wire {
  if (call.kind === 'timer') return { tool: 'timer', args: String(call.delayMs) };
  return {
    tool: `${call.namespace}.${call.name}`,
    args: call.argsJson ?? encodeValue(call.args, { root: 'args' }),
  };
}

function toOutcome(d: Record<string, unknown>): HostOutcome {
  const payload = String(d.payload);
  const clock = typeof d.clock === 'number' ? { clock: d.clock } : {};
  if (d.ok === true) return { ok: true, value: new EncodedValue(payload), ...clock };
  return { ok: false, error: JSON.parse(payload) as SerializedError, ...clock };
}

function describe(tool: string, args: string): string {
  const shown = args.length > 120 ? `${args.slice(0, 117)}...` : args;
  return tool === 'timer' ? `setTimeout(${shown} ms)` : `${tool}(${shown})`;
}
