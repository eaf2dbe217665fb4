import { EncodedValue, encodeOutcome } from '../codec/index.ts';
import { CodecallError, failure } from '../errors/index.ts';
import { idempotencyKey } from '../spec/index.ts';
import type { HostCall, HostOutcome, JournalEntryInput, JournalEntryInputOf } from '../spec/index.ts';
import { oversizeResult } from './call-size-limits.ts';
import { decideApproval, decideInput } from './call-decision.ts';
import type { JournalMemory, CallMark } from './journal-memory.ts';
import { inputTimeoutError, isInputWait } from './input-wait.ts';
import { requestToolInput } from './tool-input-requests.ts';
import type { CallInputs } from './tool-input-requests.ts';
import { forTools, toOutcome, wireForm } from './journal-wire.ts';
import type { Wire } from './journal-wire.ts';
import type { JournalingHostOptions } from './journaling-host-options.ts';

/**
 * A promise that never settles, fresh per call: a shared one would collect a reaction from every waiting call and
 * keep each execution's state reachable forever (~9 KiB per paused task).
 */
export function never(): Promise<HostOutcome> {
  return new Promise<HostOutcome>(() => undefined);
}

/**
 * A read still running after this long journals its intent then (with its start), so a long read (a fetch, a
 * model call) shows as running in the task's stream and console, and is in the journal if the process dies.
 */
export const READ_INTENT_AFTER_MS = 200;

export function unreachable(decision: never): never {
  throw new Error(`unhandled decision ${JSON.stringify(decision)}`);
}

/** What a live call needs of the journaling host: its call state and how it journals. */
export interface LiveCallJournal {
  readonly memory: JournalMemory;
  /** Commits entries (they are delivered only once durable). */
  commit(entries: readonly JournalEntryInput[]): Promise<void>;
  /** Journals marks of calls' progress; the call state takes them at once. */
  mark(entries: readonly CallMark[], deferred?: boolean): Promise<void>;
  /**
   * Counts entries against the budgets, then commits (or defers) them after `counted`, entries the budgets
   * already counted (a read's intent, counted when it was admitted).
   */
  write(
    entries: readonly JournalEntryInput[],
    deferred: boolean,
    at?: number,
    counted?: readonly JournalEntryInput[],
  ): Promise<void>;
  /** Whether taken-over calls' entries wait for the next commit (ADR 0034): a new call's intent takes them. */
  holdsDeferred(): boolean;
  /** Counts entries against the budgets now; they are committed later through `write`'s `counted`. */
  count(entries: readonly JournalEntryInput[], at: number): void;
  /** The call waits for a human: it is not work in flight. */
  park(callId: string): void;
  /** Resolves once every recorded outcome has been delivered. */
  whenDrained(): Promise<void>;
}

/**
 * The live path of a journaled execution: a call the journal has no outcome for is journaled (intent), asked
 * approval or input for, run, and its outcome journaled before the guest sees it; a call whose service was not
 * reached is not journaled (ADR 0047).
 */
export class LiveCalls {
  /** Reads under way whose intent waits for their outcome, and the one timer that looks for long ones. */
  private readonly running = new Set<ReadIntent>();
  private sweep: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly options: JournalingHostOptions,
    private readonly journal: LiveCallJournal,
  ) {}

  async run(call: HostCall, signal: AbortSignal, intent: Wire | null, cost?: number): Promise<HostOutcome> {
    const key =
      call.kind === 'tool' && this.options.keyPrefix
        ? idempotencyKey(this.options.keyPrefix, call.callId)
        : undefined;
    const data = intent && {
      call_id: call.callId,
      tool: intent.tool,
      args: intent.args,
      ...(key === undefined ? {} : { idempotency_key: key }),
      ...(cost === undefined ? {} : { cost }),
    };
    const approval = decideApproval(call, this.journal.memory, this.options);
    // A new read that runs at once journals its intent with its outcome, in one append (ADR 0047, amended
    // 2026-12-07): a read cut off before its outcome is simply made again, so nothing needs its intent before.
    // Counted now all the same, so the next call of this turn is admitted against it.
    let pending: ReadIntent | null = null;
    // Not while taken-over calls' entries wait: the next commit makes them durable before any new call runs.
    if (data && approval.kind === 'none' && this.readsAlone(call) && !this.journal.holdsDeferred()) {
      // Its start is when it was admitted, as an intent committed then would say.
      const at = this.options.clock();
      pending = { data, journaled: false, startedAt: at, since: performance.now() };
      this.journal.count([{ type: 'tool_intent', data }], at);
    } else if (data) {
      await this.journal.commit([{ type: 'tool_intent', data }]);
    }
    if (isInputWait(call)) return this.waitForInput(call, signal);
    switch (approval.kind) {
      case 'request':
      case 'wait': {
        if (approval.kind === 'request') {
          const { tool, args } = wireForm(call);
          const rules = this.options.approvalRules?.(call);
          const data = {
            approval_id: call.callId,
            call_id: call.callId,
            tool,
            args,
            // Fixed when asked, so any runtime that decides (or expires) it later applies the same rules.
            ...(rules?.roles ? { roles: rules.roles } : {}),
            ...(rules?.separation ? { separation: true } : {}),
            ...(rules?.ttlSeconds ? { expires_at: this.options.clock() + rules.ttlSeconds * 1000 } : {}),
          };
          await this.journal.mark([{ type: 'approval_request', data }]);
        }
        // Waiting for a human is not work in flight: a pause need not wait for it.
        this.journal.park(call.callId);
        this.options.onApprovalRequired?.();
        return never();
      }
      case 'rejected': {
        const reason = approval.reason ? `: ${approval.reason}` : '';
        const what = call.kind === 'tool' ? `${call.namespace}.${call.name}` : 'a timer';
        const rejected: HostOutcome = {
          ok: false,
          error: approval.expired
            ? failure('APPROVAL_EXPIRED', `${what} was not approved in time (${approval.reason})`)
            : failure('TOOL_REJECTED', `${what} was rejected${reason}`),
        };
        return this.finish(call, signal, rejected);
      }
      case 'start':
        await this.journal.mark([
          { type: 'control', data: { action: 'approved_call_started', call_id: call.callId } },
        ]);
        break;
      case 'none':
        break;
      default:
        return unreachable(approval);
    }
    if (signal.aborted && call.kind === 'tool') {
      // The execution ended (a pause) between the intent's commit and the tool's start: say that it never ran,
      // so a resume may run it whatever its effect. A read's intent was not journaled: the resume runs it anew.
      if (!pending) {
        await this.journal.mark([{ type: 'control', data: { action: 'not_started', call_id: call.callId } }]);
      }
      return { ok: false, error: failure('INTERRUPTED', 'not started') };
    }
    if (call.kind === 'tool' && this.options.proveLease && this.options.effectOf(call) !== 'read') {
      try {
        await this.options.proveLease();
      } catch (e) {
        this.options.onFatal(
          e instanceof CodecallError ? e : new CodecallError('FENCED', 'the lease could not be proven'),
        );
        return never();
      }
    }
    const keyed = forTools(call, key, this.options.fencingToken);
    const inputs: CallInputs = { waiting: false, used: new Set() };
    const onInputRequired = this.options.onInputRequired?.bind(this.options);
    const served: HostCall =
      keyed.kind === 'tool' && onInputRequired
        ? {
            ...keyed,
            requestInput: async (request) => {
              // A request for input names its call: a read's intent is journaled before it.
              if (pending) await this.journalIntent(pending);
              return requestToolInput(keyed, request, inputs, {
                memory: this.journal.memory,
                mark: (entries) => this.journal.mark(entries),
                onInputRequired,
              });
            },
          }
        : keyed;
    if (pending) this.watchLong(pending);
    const outcome = await this.options.live.call(served, this.toolSignal(signal)).finally(() => {
      if (pending) this.running.delete(pending);
    });
    if (inputs.waiting) {
      // It stopped to wait for a human's answer: no outcome; made again with the answer at hand (ADR 0047).
      this.journal.park(call.callId);
      return never();
    }
    if (await this.unreachable(call, outcome, pending)) return never();
    return this.finish(call, signal, outcome, false, pending);
  }

  /**
   * One timer for all reads, not one per read (a quick read pays a set's add and delete): each sweep journals the
   * intents of the reads under way for READ_INTENT_AFTER_MS, and the timer runs while any read is.
   */
  private watchLong(pending: ReadIntent): void {
    this.running.add(pending);
    this.sweep ??= setTimeout(() => this.sweepLong(), READ_INTENT_AFTER_MS).unref();
  }

  private sweepLong(): void {
    this.sweep = undefined;
    const now = performance.now();
    for (const pending of this.running) {
      if (now - pending.since < READ_INTENT_AFTER_MS) continue;
      this.running.delete(pending);
      // A failed commit fails the outcome's too, in the same queue.
      this.journalIntent(pending).catch(() => undefined);
    }
    if (this.running.size > 0) this.sweep = setTimeout(() => this.sweepLong(), READ_INTENT_AFTER_MS).unref();
  }

  /** Journals a read's intent ahead of its outcome, once (its outcome then goes alone). */
  journalIntent(pending: ReadIntent): Promise<void> {
    if (pending.journaled) return Promise.resolve();
    pending.journaled = true;
    const data = { ...pending.data, started_at: pending.startedAt };
    return this.journal.write([], false, undefined, [{ type: 'tool_intent', data }]);
  }

  /** A tool call whose effect is `read`: its intent may wait for its outcome. */
  private readsAlone(call: HostCall): boolean {
    return call.kind === 'tool' && this.options.effectOf(call) === 'read';
  }

  /**
   * A call whose tool's service could not be reached: not journaled; one whose request never left is marked
   * `not_started` (a resume runs it whatever its effect), one cut off mid-call is lost (its effect decides).
   */
  private async unreachable(
    call: HostCall,
    outcome: HostOutcome,
    pending: ReadIntent | null,
  ): Promise<boolean> {
    if (outcome.ok || !this.options.onUnreachable || call.kind !== 'tool') return false;
    const how = outcome.error.details?.unreachable;
    if (how !== 'not_sent' && how !== 'in_doubt') return false;
    // A read whose intent was never journaled: nothing to mark, the next run makes it as a new call.
    if (how === 'not_sent' && (!pending || pending.journaled)) {
      await this.journal.mark([{ type: 'control', data: { action: 'not_started', call_id: call.callId } }]);
    }
    this.journal.park(call.callId);
    this.options.onUnreachable(outcome.error);
    return true;
  }

  private toolSignal(signal: AbortSignal): AbortSignal {
    return this.options.toolSignal ?? signal;
  }

  /** `input.wait(name, { timeoutSeconds })`: the answer once journaled, else a journaled request and a pause. */
  private async waitForInput(call: HostCall & { kind: 'tool' }, signal: AbortSignal): Promise<HostOutcome> {
    const step = decideInput(call, this.journal.memory);
    switch (step.kind) {
      case 'answered': {
        const outcome: HostOutcome =
          step.value === null
            ? { ok: false, error: inputTimeoutError(call.args) }
            : { ok: true, value: new EncodedValue(step.value) };
        return this.finish(call, signal, outcome);
      }
      case 'invalid':
        return this.finish(call, signal, { ok: false, error: step.error });
      case 'request': {
        const { name, timeoutSeconds } = step;
        const deadline = timeoutSeconds === null ? null : this.options.clock() + timeoutSeconds * 1000;
        const data = { call_id: call.callId, name, timeout_seconds: timeoutSeconds, deadline };
        await this.journal.mark([{ type: 'input_request', data }]);
        break;
      }
      case 'wait':
        break;
      default:
        return unreachable(step);
    }
    this.journal.park(call.callId);
    this.options.onInputRequired?.();
    return never();
  }

  async finish(
    call: HostCall,
    signal: AbortSignal,
    outcome: HostOutcome,
    deferred = false,
    pending: ReadIntent | null = null,
  ): Promise<HostOutcome> {
    if (this.toolSignal(signal).aborted && !outcome.ok) {
      // The tool was stopped (cancel, deadline, a lost lease) and gave up: nothing is known of its effect, so
      // nothing is journaled; a resume re-runs it if its effect allows, or asks a human.
      return outcome;
    }
    if (!signal.aborted) await this.journal.whenDrained();
    const clock = this.options.clock();
    const what = call.kind === 'timer' ? 'a timer' : `${call.namespace}.${call.name}`;
    let { ok, payload } = encodeOutcome(outcome, what);
    // A result over the bound is refused before it is journaled: the journal holds the failure, not the value.
    const tooLarge = ok ? oversizeResult(what, payload, this.options.sizes) : null;
    if (tooLarge !== null) ({ ok, payload } = encodeOutcome({ ok: false, error: tooLarge }, what));
    const entry: JournalEntryInput = {
      type: 'tool_outcome',
      data: { call_id: call.callId, ok, payload, clock },
    };
    // A read's intent goes just before its outcome, with the time its tool started (the call's duration).
    const intent: JournalEntryInput[] =
      pending && !pending.journaled
        ? [
            {
              type: 'tool_intent',
              data: {
                ...pending.data,
                started_at: pending.startedAt,
              },
            },
          ]
        : [];
    await this.journal.write([entry], deferred, clock, intent);
    return { ...toOutcome({ ok, payload }), clock };
  }
}

/**
 * A read's intent, counted by the budgets, journaled with its outcome, or before it when the read runs long or asks
 * for input.
 */
interface ReadIntent {
  readonly data: JournalEntryInputOf<'tool_intent'>['data'];
  journaled: boolean;
  readonly startedAt: number;
  /** performance.now() when it was admitted: what the sweep for long reads goes by (the clock may be a test's). */
  readonly since: number;
}
