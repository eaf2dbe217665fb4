import { EncodedValue } from '../codec/index.ts';
import { CodecallError, failure, toCodecallError } from '../errors/index.ts';
import { isBodyRead, longTimeout, parseCallId } from '../spec/index.ts';
import type { LongTimer } from '../spec/index.ts';
import type {
  AttentionCallData,
  ExecutionHost,
  HostCall,
  HostOutcome,
  JournalEntryInput,
  LogEntry,
  RevisedFrom,
  ToolLimitsOfCall,
} from '../spec/index.ts';
import { lostCallsError } from './attention-error.ts';
import { oversizeArguments, oversizeStandIn, refusedArguments, refusedStandIn } from './call-size-limits.ts';
import type { Admission } from './budget-ledger.ts';
import { CallAdmission } from './call-admission.ts';
import { AdmissionTurns } from './admission-turns.ts';
import { CarryPool } from './carry-pool.ts';
import { CommitQueue } from './commit-queue.ts';
import { decideCall } from './call-decision.ts';
import { JournalMemory } from './journal-memory.ts';
import { LiveCalls, never, unreachable } from './live-calls.ts';
import type { JournalingHostOptions } from './journaling-host-options.ts';
import type { CallMark } from './journal-memory.ts';
import { describeCall, wireForm } from './journal-wire.ts';
import type { Wire } from './journal-wire.ts';

export type { JournalingHostOptions } from './journaling-host-options.ts';

/** A new call whose admission a pause interrupted: nothing was journaled, a resume decides it again. */
const interrupted: HostOutcome = { ok: false, error: failure('INTERRUPTED', 'not started') };

/** For a refusal decided before anything ran: no tool was started that a stop could have interrupted. */
const signalNever = new AbortController().signal;

/**
 * The host side of a journaled execution. Recorded outcomes are served from the journal in their recorded
 * delivery order (so `Promise.all` replays exactly); calls past the journal run live, with the intent committed
 * before the tool runs and the outcome committed before the guest sees it (a taken-over call's entries go with the
 * next commit, ADR 0034). Live outcomes wait until every recorded one has been delivered. What happens to each
 * call is decided by `decideCall` (and, as it runs, by `decideApproval` / `decideInput`) from the call state in
 * `JournalMemory`; the host carries the decisions out.
 */
export class JournalingHost implements ExecutionHost {
  private readonly waiting = new Map<number, (outcome: HostOutcome) => void>();
  private readonly drained: (() => void)[] = [];
  private next = 0;
  /** The driver served the recorded outcomes from a replay script and has handed over the last one. */
  private scriptDone = false;
  private drainScheduled = false;
  private readonly inFlight = new Set<Promise<HostOutcome>>();
  private readonly byCall = new Map<string, Promise<HostOutcome>>();
  private readonly parked = new Set<string>();
  /** Every call id this execution asked for. */
  private readonly issued = new Set<string>();
  readonly #inDoubt: AttentionCallData[] = [];
  private readonly commits: CommitQueue;
  private readonly memory: JournalMemory;
  private readonly earlier: CarryPool | undefined;
  /** New calls' turns while one waits for its tenant's limits (a store round trip): admitted in call order. */
  private readonly turns = new AdmissionTurns();
  private readonly admission: CallAdmission;
  private readonly lives: LiveCalls;
  readonly onLog?: (entry: LogEntry) => void;

  constructor(private readonly options: JournalingHostOptions & { onLog?: (entry: LogEntry) => void }) {
    this.commits = new CommitQueue(
      (entries) => options.append(entries),
      (lost) => options.onFatal(toCodecallError(lost, 'STORE_ERROR')),
    );
    const onLog = options.onLog;
    // Lines the program printed before the interruption were streamed then; during the replay they are not
    // streamed again (the execution's own log still holds them all).
    if (onLog) this.onLog = (entry) => (this.replayDone ? onLog(entry) : undefined);
    this.memory = new JournalMemory(options.recorded);
    this.next = options.delivered ?? 0;
    this.admission = new CallAdmission({
      ...(options.budgets ? { budgets: options.budgets } : {}),
      ...(options.tenantLimits ? { tenantLimits: options.tenantLimits } : {}),
    });
    this.lives = new LiveCalls(options, {
      memory: this.memory,
      commit: (entries) => this.commit(entries),
      mark: (entries, deferred) => this.mark(entries, deferred),
      write: (entries, deferred, at, counted) => this.write(entries, deferred, at, counted),
      count: (entries, at) => this.count(entries, at),
      holdsDeferred: () => this.commits.holdsDeferred,
      park: (callId) => this.park(callId),
      whenDrained: () => this.whenDrained(),
    });
    this.earlier =
      options.carry && options.carry.offers.length > 0 ? new CarryPool(options.carry) : undefined;
  }

  /** True once every recorded outcome has been delivered: the execution is live from here. */
  get replayDone(): boolean {
    return this.scriptDone || this.next >= this.memory.outcomes.length;
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
    // Drivers number their calls; one id asked for twice would be two calls under one idempotency key.
    if (this.issued.has(call.callId)) {
      return this.fatal(
        'PROTOCOL_VIOLATION',
        `${call.callId}: the execution asked for this call id twice (two calls cannot share an id or a key)`,
        { call_id: call.callId },
      );
    }
    this.issued.add(call.callId);
    // A read of a stored body (ADR 0046) names its bytes by digest: the store answers it, live or in a replay,
    // and it is not journaled (nor counted against budgets: the fetch that stored the body was).
    if (isBodyRead(call)) return this.options.live.call(call, signal);
    const oversize = this.oversizeArguments(call);
    if (oversize) return oversize;
    // Arguments within the bound are decoded here (a driver may decode on first read): a malformed payload
    // fails the call now, before its intent is journaled.
    if (call.kind === 'tool') void call.args;
    const decision = decideCall(call, this.memory, this.options, this.earlier);
    switch (decision.kind) {
      case 'live': {
        const limits = this.options.tenantLimits?.limitsOf(call) ?? null;
        if (limits !== null || this.turns.busy) {
          return this.track(call, this.admitInTurn(call, signal, decision.intent, limits));
        }
        // Admitted (and counted, as its intent is journaled) now, in call order: a Promise.all's calls too.
        const admission = this.admission.admit(call);
        if (admission.kind !== 'run') return this.refuse(call, decision.intent, admission);
        return this.track(call, this.lives.run(call, signal, decision.intent, admission.cost));
      }
      case 'carry': {
        const { intent, offer } = decision;
        // Marked at once: the next call of this turn must not take the same offer. Its entries wait for the next
        // commit (a crash before it only means the call is taken over again).
        const data = intent && { call_id: call.callId, ...intent, carried_from: offer.origin };
        const taken = data ? this.mark([{ type: 'tool_intent', data }], true) : Promise.resolve();
        const outcome: HostOutcome = { ok: true, value: new EncodedValue(offer.payload) };
        return this.track(
          call,
          taken.then(() => this.lives.finish(call, signal, outcome, true)),
        );
      }
      case 'hold': {
        const { intent, earlier } = decision;
        const hold = (): Promise<HostOutcome> => this.hold(call, intent, earlier);
        // Behind a call waiting for its tenant's limits, it waits its turn to be admitted.
        return this.track(call, this.turns.busy ? this.turns.take(() => Promise.resolve(hold)) : hold());
      }
      case 'replay':
        return new Promise((resolve) => {
          this.waiting.set(decision.position, resolve);
          this.scheduleDrain();
        });
      case 'refused':
        // Its intent was journaled refused, its outcome lost: the refusal is journaled again, nothing runs.
        return this.track(
          call,
          this.lives.finish(call, signalNever, this.admission.refusedAgain(call, decision.budget)),
        );
      case 'diverged': {
        const { recorded, now } = decision;
        return this.fatal(
          'REPLAY_DIVERGENCE',
          `${call.callId}: the journal has ${describeCall(recorded.tool, recorded.args)}, the program now calls ${describeCall(now.tool, now.args)}`,
          { call_id: call.callId, journal: recorded, now },
        );
      }
      case 'await_approval':
      case 'await_input':
      case 'rerun':
        return this.track(call, this.lives.run(call, signal, null));
      case 'retry': {
        // A crash from here asks again (a human's retry is spent once the call starts).
        const started = this.mark([
          { type: 'control', data: { action: 'retry_started', call_id: call.callId } },
        ]);
        return this.track(
          call,
          started.then(() => this.lives.run(call, signal, null)),
        );
      }
      case 'skip':
        return this.track(
          call,
          this.lives.finish(call, signal, { ok: true, value: new EncodedValue(decision.payload) }),
        );
      case 'needs_attention': {
        const { tool, args } = decision.now;
        const earlier = decision.earlier ? { earlier: decision.earlier } : {};
        return this.needsAttention(call, { call_id: call.callId, tool, args, ...earlier });
      }
      default:
        return unreachable(decision);
    }
  }

  /**
   * A new call under its tenant's limits (or behind one that is): it waits for the calls before it to journal
   * their intents, then the task's budgets and the tenant's limits (the store) admit it. A refusal is journaled
   * as the budgets' are; the token it took is journaled with its intent, so no replay takes it again. A store
   * that fails ends the execution (as a failed commit does); a pause meanwhile journals nothing.
   */
  private admitInTurn(
    call: HostCall,
    signal: AbortSignal,
    intent: Wire,
    limits: ToolLimitsOfCall | null,
  ): Promise<HostOutcome> {
    return this.turns.take(async () => {
      let admission: Admission;
      try {
        admission = await this.admission.admitUnderLimits(call, limits, signal);
      } catch (e) {
        if (signal.aborted) return () => Promise.resolve(interrupted);
        this.options.onFatal(toCodecallError(e, 'STORE_ERROR'));
        return never;
      }
      const admitted = admission;
      return admitted.kind === 'run'
        ? () => this.lives.run(call, signal, intent, admitted.cost)
        : () => this.refusal(call, intent, admitted);
    });
  }

  /** A new call held for a human (ADR 0034), once its budgets admit it; refused like any new call otherwise. */
  private hold(call: HostCall, intent: Wire, earlier: RevisedFrom): Promise<HostOutcome> {
    const admission = this.admission.admit(call);
    if (admission.kind !== 'run') return this.refusal(call, intent, admission);
    const cost = admission.cost === undefined ? {} : { cost: admission.cost };
    const held = this.mark([
      {
        type: 'tool_intent',
        data: { call_id: call.callId, tool: intent.tool, args: intent.args, ...cost },
      },
      { type: 'control', data: { action: 'revision_held', call_id: call.callId, earlier } },
    ]);
    return held.then(() => this.needsAttention(call, { call_id: call.callId, ...intent, earlier }));
  }

  /**
   * A new call its budgets refuse (or whose cost could not be computed) fails and never runs. The journal holds its
   * intent, marked `over_budget` (not counted; a cost that failed counts the call at cost 0), and the failure as
   * its outcome, as for arguments over their bound: a replay delivers the same failure in the same place.
   */
  private refuse(
    call: HostCall,
    intent: Wire,
    admission: Exclude<Admission, { kind: 'run' }>,
  ): Promise<HostOutcome> {
    return this.track(call, this.refusal(call, intent, admission));
  }

  private refusal(
    call: HostCall,
    intent: Wire,
    admission: Exclude<Admission, { kind: 'run' }>,
  ): Promise<HostOutcome> {
    const marked = admission.kind === 'refuse' ? { over_budget: admission.budget } : { cost: 0 };
    const data = { call_id: call.callId, tool: intent.tool, args: intent.args, ...marked };
    const outcome: HostOutcome = { ok: false, error: admission.error };
    return this.commit([{ type: 'tool_intent', data }]).then(() =>
      this.lives.finish(call, signalNever, outcome),
    );
  }

  /** A call waits for a human's decision (lost, or held by a revision): the runner pauses with the others. */
  private needsAttention(call: HostCall, data: AttentionCallData): Promise<HostOutcome> {
    this.#inDoubt.push(data);
    if (!this.options.onAttentionRequired) {
      this.options.onFatal(lostCallsError(data));
      return never();
    }
    this.park(call.callId);
    this.options.onAttentionRequired();
    return never();
  }

  /**
   * A tool call whose encoded arguments are over the bound fails with TOOL_ARGUMENTS_TOO_LARGE and never runs.
   * The journal holds its intent with a stand-in for the arguments (size and digest) and the failure as its
   * outcome, so a replay delivers the same failure in the same place; null for a call within the bound.
   */
  private oversizeArguments(call: HostCall): Promise<HostOutcome> | null {
    if (call.kind !== 'tool') return null;
    const refused = call.argsTooLarge;
    const tool = `${call.namespace}.${call.name}`;
    // Refused by the driver before they crossed; else measured here.
    const args = refused ? refusedStandIn(refused) : wireForm(call).args;
    const error = refused
      ? refusedArguments(tool, refused.bytes, this.options.sizes)
      : oversizeArguments(tool, args, this.options.sizes);
    if (error === null) return null;
    const position = this.memory.positions.get(call.callId);
    if (position !== undefined) {
      return new Promise((resolve) => {
        this.waiting.set(position, resolve);
        this.scheduleDrain();
      });
    }
    const outcome: HostOutcome = { ok: false, error };
    const standIn = refused ? args : oversizeStandIn(args);
    const intent = this.memory.intents.has(call.callId)
      ? Promise.resolve()
      : this.commit([{ type: 'tool_intent', data: { call_id: call.callId, tool, args: standIn } }]);
    return this.track(
      call,
      intent.then(() => this.lives.finish(call, signalNever, outcome)),
    );
  }

  /** The lost unsafe calls this execution asked for again, in the order asked. */
  get inDoubt(): readonly AttentionCallData[] {
    return this.#inDoubt;
  }

  /**
   * The first journaled call (in journal order) that this execution did not issue again, given how many calls
   * it issued: a driver numbers them call-1, call-2, ... in issue order, so a recorded call-N with N past the
   * count was skipped. Null when the program asked again for every call its journal holds.
   */
  firstUnissued(issued: number): { readonly callId: string; readonly recorded: Wire } | null {
    for (const [callId, recorded] of this.memory.intents) {
      const id = parseCallId(callId);
      if (id === null || id.n > issued) return { callId, recorded };
    }
    return null;
  }

  /**
   * Resolves once every live call has journaled its outcome (or was given up), or after `timeoutMs`: an
   * execution that was paused keeps the results of the calls that were already running.
   */
  async idle(timeoutMs: number): Promise<void> {
    if (this.inFlight.size === 0) return;
    let timer: LongTimer | undefined;
    await Promise.race([
      Promise.allSettled([...this.inFlight]),
      new Promise<void>((resolve) => (timer = longTimeout(resolve, timeoutMs))),
    ]);
    timer?.clear();
  }

  /** Counts a running call as work in flight (`idle()` waits for it) until it settles or waits for a human. */
  private track(call: HostCall, running: Promise<HostOutcome>): Promise<HostOutcome> {
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

  /** A call waiting for a human is not work in flight: `idle()` (and so a pause) does not wait for it. */
  private park(callId: string): void {
    this.parked.add(callId);
    const running = this.byCall.get(callId);
    if (running) this.inFlight.delete(running);
  }

  private commit(entries: readonly JournalEntryInput[]): Promise<void> {
    return this.write(entries, false);
  }

  /** Journals marks of calls' progress; the call state takes them at once, before they are durable. */
  private mark(entries: readonly CallMark[], deferred = false): Promise<void> {
    for (const entry of entries) this.memory.mark(entry);
    return this.write(entries, deferred);
  }

  /**
   * Every entry this host journals goes through here: the budgets count it at once (synchronously, so the next
   * call of the same turn is admitted against it), then it is committed (or deferred to the next commit).
   */
  private write(
    entries: readonly JournalEntryInput[],
    deferred: boolean,
    at?: number,
    counted: readonly JournalEntryInput[] = [],
  ): Promise<void> {
    this.count(entries, at);
    const all = counted.length === 0 ? entries : [...counted, ...entries];
    return deferred ? this.commits.defer(all) : this.commits.commit(all);
  }

  /** The budgets count entries at once (a read's intent is journaled later, with its outcome). */
  private count(entries: readonly JournalEntryInput[], at?: number): void {
    const budgets = this.options.budgets;
    if (budgets) budgets.journaled(entries, at ?? this.options.clock(), this.options.journalId);
  }

  /** Makes the entries still waiting for a commit (taken-over calls) durable: the run does before it ends. */
  flush(): Promise<void> {
    return this.commits.flush();
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
      const recorded = this.memory.outcomes[this.next];
      this.next += 1;
      if (recorded) resolve(recorded.outcome);
    }
    if (this.replayDone) for (const release of this.drained.splice(0)) release();
  }

  private whenDrained(): Promise<void> {
    return this.replayDone ? Promise.resolve() : new Promise((resolve) => this.drained.push(resolve));
  }

  private fatal(
    code: 'REPLAY_DIVERGENCE' | 'PROTOCOL_VIOLATION',
    message: string,
    details: Record<string, unknown>,
  ) {
    this.options.onFatal(new CodecallError(code, message, { details }));
    return never();
  }
}
