import { EncodedValue, encodeOutcome, encodeValue } from '../codec/index.ts';
import { CodecallError, toCodecallError } from '../errors/index.ts';
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
  /** The guest waits for external input (`input.wait`): the runner pauses the execution, as for approvals. */
  onInputRequired?(): void;
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
  private readonly parked = new Set<string>();
  /** Calls whose execution ended after their intent was journaled and before the tool started. */
  private readonly notStarted = new Set<string>();
  private readonly requested = new Set<string>();
  /** Approved calls that began running: after a crash their effect decides, as for any lost call. */
  private readonly started = new Set<string>();
  private readonly decisions = new Map<string, { decision: string; reason: string }>();
  /** Input waits asked for, and the answers (a value's tagged JSON, or null for a timeout) by call id. */
  private readonly inputRequested = new Set<string>();
  private readonly inputs = new Map<string, string | null>();
  /** A human's decision on a lost unsafe call; spent once the retried call starts. */
  private readonly attention = new Map<string, { action: string; payload: string | null }>();
  /** Entries waiting for the next append, with their callers; `appending` while an append is in flight. */
  private readonly queued: {
    entries: readonly JournalEntryInput[];
    resolve: () => void;
    reject: (error: Error) => void;
  }[] = [];
  private appending = false;
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
      if (entry.type === 'input_request') this.inputRequested.add(callId);
      if (entry.type === 'input_provided') this.inputs.set(callId, String(d.value));
      if (entry.type === 'input_timeout') this.inputs.set(callId, null);
      if (entry.type === 'attention_decision') {
        const payload = typeof d.payload === 'string' ? d.payload : null;
        this.attention.set(callId, { action: String(d.action), payload });
      }
      if (entry.type === 'control' && d.action === 'retry_started') this.attention.delete(callId);
      if (entry.type === 'control' && d.action === 'not_started') this.notStarted.add(callId);
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
      // A call that waits (or waited) for approval cannot have run before it was approved and started.
      const gated = this.requested.has(call.callId) || this.options.needsApproval?.(call) === true;
      if (gated && !this.started.has(call.callId)) return this.runLive(call, signal, null);
      if (this.notStarted.has(call.callId)) return this.runLive(call, signal, null);
      // Waiting for input has no effect on the world: it simply waits again (or takes its answer).
      if (isInputWait(call)) return this.runLive(call, signal, null);
      // The intent was committed but its outcome was lost (a crash while the call ran).
      const decided = this.attention.get(call.callId);
      if (decided?.action === 'skip') {
        const value = new EncodedValue(decided.payload ?? encodeValue(null));
        return this.runLive(call, signal, null, { ok: true, value });
      }
      if (decided?.action === 'retry') {
        this.attention.delete(call.callId);
        return this.runLive(call, signal, null, undefined, true);
      }
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

  /**
   * `intent` is journaled first unless the journal already has it (null). `given` is an outcome decided by a
   * human (a skipped call); `retry` journals that a human's retry started, so a crash during it asks again.
   */
  private runLive(
    call: HostCall,
    signal: AbortSignal,
    intent: Wire | null,
    given?: HostOutcome,
    retry = false,
  ): Promise<HostOutcome> {
    const running = given
      ? this.finishLive(call, signal, given)
      : retry
        ? this.commit([{ type: 'control', data: { action: 'retry_started', call_id: call.callId } }]).then(
            () => this.live(call, signal, intent),
          )
        : this.live(call, signal, intent);
    this.inFlight.add(running);
    this.byCall.set(call.callId, running);
    // It may already have parked itself (waiting for a human) before it was registered here.
    if (this.parked.has(call.callId)) this.inFlight.delete(running);
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
    if (isInputWait(call)) return this.waitForInput(call, signal);
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
        this.park(call.callId);
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
    if (signal.aborted && call.kind === 'tool') {
      // The execution ended (a pause) between the intent's commit and the tool's start: say that it never ran,
      // so a resume may run it whatever its effect.
      await this.commit([{ type: 'control', data: { action: 'not_started', call_id: call.callId } }]);
      return { ok: false, error: { code: 'INTERRUPTED', name: 'Error', message: 'not started' } };
    }
    const keyed: HostCall =
      call.kind === 'tool' && key !== undefined ? { ...call, idempotencyKey: key } : call;
    return this.finishLive(call, signal, await this.options.live.call(keyed, signal));
  }

  /** `input.wait(name, { timeoutSeconds })`: the answer once journaled, else a journaled request and a pause. */
  private async waitForInput(call: HostCall & { kind: 'tool' }, signal: AbortSignal): Promise<HostOutcome> {
    if (this.inputs.has(call.callId)) {
      const value = this.inputs.get(call.callId);
      const outcome: HostOutcome =
        typeof value === 'string'
          ? { ok: true, value: new EncodedValue(value) }
          : { ok: false, error: inputTimeoutError(call.args) };
      return this.finishLive(call, signal, outcome);
    }
    const request = parseInputWait(call.args);
    if ('error' in request) return this.finishLive(call, signal, { ok: false, error: request.error });
    if (!this.inputRequested.has(call.callId)) {
      this.inputRequested.add(call.callId);
      const deadline =
        request.timeoutSeconds === null ? null : this.options.clock() + request.timeoutSeconds * 1000;
      const data = {
        call_id: call.callId,
        name: request.name,
        timeout_seconds: request.timeoutSeconds,
        deadline,
      };
      await this.commit([{ type: 'input_request', data }]);
    }
    this.park(call.callId);
    this.options.onInputRequired?.();
    return never;
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

  /** A call waiting for a human is not work in flight: `idle()` (and so a pause) does not wait for it. */
  private park(callId: string): void {
    this.parked.add(callId);
    const running = this.byCall.get(callId);
    if (running) this.inFlight.delete(running);
  }

  /**
   * Appends run one after another, in the order commit() was called, so outcomes are journaled in the order they
   * are delivered. Entries queued while an append is in flight go together in the next one; each caller settles
   * when the append holding its entries does.
   */
  private commit(entries: readonly JournalEntryInput[]): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queued.push({ entries, resolve, reject });
      if (!this.appending) void this.appendQueued();
    });
  }

  private async appendQueued(): Promise<void> {
    this.appending = true;
    await Promise.resolve(); // the commits of this same turn join the first append
    while (this.queued.length > 0) {
      const batch = this.queued.splice(0);
      try {
        await this.options.append(batch.flatMap((c) => c.entries));
        for (const c of batch) c.resolve();
      } catch (error) {
        const failure = error instanceof Error ? error : toCodecallError(error, 'STORE_ERROR');
        for (const c of batch) c.reject(failure);
      }
    }
    this.appending = false;
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

/** Where the guest finds `input.wait`; the runner adds this binding to every durable task. */
export const INPUT_WAIT_BINDING = { namespace: 'input', name: 'wait', params: ['name', 'options'] } as const;

function isInputWait(call: HostCall): call is HostCall & { kind: 'tool' } {
  return (
    call.kind === 'tool' &&
    call.namespace === INPUT_WAIT_BINDING.namespace &&
    call.name === INPUT_WAIT_BINDING.name
  );
}

function parseInputWait(
  args: unknown,
): { name: string; timeoutSeconds: number | null } | { error: SerializedError } {
  const a = (args ?? {}) as { name?: unknown; options?: unknown };
  const invalid = (message: string) => ({
    error: { code: 'TOOL_VALIDATION', name: 'ToolValidationError', message: `input.wait: ${message}` },
  });
  if (typeof a.name !== 'string' || a.name.length === 0 || a.name.length > 200) {
    return invalid('the first argument must be a name (a non-empty string of at most 200 characters)');
  }
  const options = (a.options ?? {}) as { timeoutSeconds?: unknown };
  if (typeof options !== 'object') return invalid('the second argument must be an options object');
  const t = options.timeoutSeconds;
  if (t === undefined || t === null) return { name: a.name, timeoutSeconds: null };
  if (typeof t !== 'number' || !Number.isFinite(t) || t <= 0) {
    return invalid('timeoutSeconds must be a positive number');
  }
  return { name: a.name, timeoutSeconds: t };
}

function inputTimeoutError(args: unknown): SerializedError {
  const name = String((args as { name?: unknown } | null)?.name);
  return {
    code: 'INPUT_TIMEOUT',
    name: 'InputTimeoutError',
    message: `no input "${name}" arrived before the wait timed out`,
  };
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
