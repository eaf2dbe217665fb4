import { setMaxListeners } from 'node:events';
import { encodeOutcome } from '../codec/index.ts';
import { failure } from '../errors/index.ts';
import type {
  ExecutionLimits,
  ExecutionRequest,
  ExecutionResult,
  ExecutionHost,
  HostCall,
  HostOutcome,
  LogEntry,
  LogLevel,
  LongTimer,
  SerializedError,
  WorkspaceFile,
} from '../spec/index.ts';
import { logEntryBytes, longTimeout } from '../spec/index.ts';
import { boundError } from './bound-error.ts';
import { hostCallFailure } from './host-failure.ts';

export type GuestFailure = SerializedError & { line?: number; column?: number };

/** How the guest ended, as its driver read it. */
export type GuestEnd = { status: 'succeeded'; value: unknown } | { status: 'failed'; error: GuestFailure };

/** What the guest used, as its driver measured it (`toolCalls` is the guest's count, read without hostLimits). */
export interface GuestUsage {
  memoryBytes: number;
  toolCalls?: number;
  cpuMs?: number;
}

/**
 * A driver's way to its guest: its messages and its channel (the quickjs worker's port, the python pipe). `C` is
 * the driver's form of one guest call, kept from the guest's ask to its outcome.
 */
export interface GuestTransport<C> {
  /** The host call `call` asks for, built when its turn comes; a throw is delivered to the guest as its failure. */
  hostCall(call: C): HostCall;
  /** Hands the guest a call's outcome: tagged JSON when ok, else a SerializedError's JSON. */
  deliver(call: C, ok: boolean, payload: string, clockMs: number): void;
  /** Asks the guest to stop at its next check (CallPump.interrupt); it still reports how it ended. */
  interrupt?(error: GuestFailure): void;
  /** Ends the guest by force (CallPump.kill); the driver then reports the end (CallPump.finish). */
  kill(): void;
}

export interface CallPumpOptions<C> {
  request: ExecutionRequest;
  limits: Readonly<ExecutionLimits>;
  transport: GuestTransport<C>;
  /**
   * How long past the time limit the host waits before it kills the guest with TIMEOUT: 0 where the host is the
   * guest's only clock (python); a grace where the guest side keeps the limit itself and the host's timer is a
   * backstop for a stuck guest (quickjs's worker thread).
   */
  graceMs: number;
  /**
   * Whether the host counts the guest's calls (replayed ones included: `count`) and output against maxToolCalls
   * and outputBytes. True where the guest could lie (python: the program's own process); false where the guest
   * side is host code that counts itself, replayed calls the host never sees included (quickjs's worker thread).
   */
  hostLimits: boolean;
  /** Called once, with the result. */
  onEnd(result: ExecutionResult): void;
}

/** The abort reason tool signals see when their execution ends normally (one object: no stack per execution). */
const EXECUTION_ENDED = Object.freeze(new Error('the execution ended'));

const NO_USAGE: GuestUsage = Object.freeze({ memoryBytes: 0 });

/**
 * The host side of one execution, shared by the drivers: serves the guest's calls on the ExecutionHost with bounded
 * concurrency (timers need no slot), delivers outcomes in the order they settle, collects logs, enforces the time
 * limit (and, with hostLimits, the call and output limits), tells the host once when a replay script is through,
 * and resolves exactly once. The first failure decided on the host (a limit, an abort) is the execution's error
 * whatever the guest reports after it.
 */
export class CallPump<C> {
  private readonly host: ExecutionHost;
  private readonly transport: GuestTransport<C>;
  private readonly limits: Readonly<ExecutionLimits>;
  private readonly clock: () => number;
  private readonly logs: LogEntry[] = [];
  /** Calls waiting for a concurrency slot, oldest first. */
  private readonly queue: C[] = [];
  private running = 0;
  private draining = false;
  /** Created with the first host call: most executions never need one. */
  private controller: AbortController | null = null;
  private toolCalls = 0;
  private outputBytes = 0;
  private override: GuestFailure | null = null;
  private replayAnnounced = false;
  private resolved = false;
  private readonly startedAt = performance.now();
  private readonly deadline: LongTimer;

  constructor(private readonly options: CallPumpOptions<C>) {
    const { request, limits } = options;
    this.host = request.host;
    this.transport = options.transport;
    this.limits = limits;
    this.clock = request.clock ?? Date.now;
    // The guest's process or thread keeps the event loop alive while it runs; this timer alone must not.
    this.deadline = longTimeout(
      () => this.kill(failure('TIMEOUT', `the execution exceeded ${limits.timeoutMs} ms`)),
      limits.timeoutMs + options.graceMs,
      { unref: true },
    );
  }

  /** The result is out: every input is ignored from now on. */
  get ended(): boolean {
    return this.resolved;
  }

  /** The result is out or its error decided: what the guest says from now on does not count. */
  get stopping(): boolean {
    return this.resolved || this.override !== null;
  }

  readClock(): number {
    return this.clock();
  }

  /** The guest asked for a call: served once a slot is free (maxConcurrentToolCalls). */
  call(call: C): void {
    if (this.resolved) return;
    this.queue.push(call);
    this.drain();
  }

  /**
   * The guest gave up on a call still waiting for a slot: it leaves the queue and goes to the host at once, without
   * a slot, so that the host decides (and journals) it as given up, as it would a call under way; the transport's
   * `hostCall` must give it a `cancelled` signal already aborted. False when no queued call matches (it runs, or
   * ran: the transport aborts its signal instead).
   */
  cancelQueued(match: (call: C) => boolean): boolean {
    if (this.resolved) return false;
    const at = this.queue.findIndex(match);
    if (at < 0) return false;
    const [call] = this.queue.splice(at, 1);
    if (call !== undefined) void this.serve(call, false);
    return true;
  }

  /** The guest set a timer: served at once (timers are not tool calls and never wait for a slot). */
  timer(call: C): void {
    if (!this.resolved) void this.serve(call, false);
  }

  /**
   * Counts one call of the guest's, whether the host serves it or the guest's replay script answers it; false once
   * past maxToolCalls (the execution is ending). Counts only with hostLimits.
   */
  count(): boolean {
    if (!this.options.hostLimits) return true;
    this.toolCalls += 1;
    if (this.toolCalls <= this.limits.maxToolCalls) return true;
    this.kill(
      failure('TOOL_CALL_LIMIT', `the program made more than ${this.limits.maxToolCalls} tool calls`),
    );
    return false;
  }

  /** A line of the guest's output (with hostLimits, counted against outputBytes: see logEntryBytes). */
  log(level: LogLevel, message: string): void {
    if (this.resolved) return;
    if (this.options.hostLimits) {
      this.outputBytes += logEntryBytes(message);
      if (this.outputBytes > this.limits.outputBytes) {
        this.kill(failure('OUTPUT_LIMIT', `the program printed more than ${this.limits.outputBytes} bytes`));
        return;
      }
    }
    const entry = { level, message };
    this.logs.push(entry);
    this.host.onLog?.(entry);
  }

  /** The guest is handing over its replay script's last outcome: what follows is live. */
  replayDone(): void {
    // Only an execution with a script has a replay to end, and it ends once.
    if (!this.options.request.replay || this.replayAnnounced) return;
    this.replayAnnounced = true;
    this.host.onReplayDone?.();
  }

  /** Stops the guest at its next check and aborts the calls it has running; the error reported is this one. */
  interrupt(error: GuestFailure): void {
    if (this.resolved) return;
    this.override ??= error;
    this.transport.interrupt?.(error);
    this.signalController().abort(error);
  }

  /** Ends the guest by force; the error reported is this one. Its running calls are aborted when it has ended. */
  kill(error: GuestFailure): void {
    if (this.resolved) return;
    this.override ??= error;
    this.transport.kill();
  }

  /** The guest ended (or is gone): resolves the execution, with the host's error if one was decided first. */
  finish(end: GuestEnd, usage: GuestUsage = NO_USAGE, artifacts?: readonly WorkspaceFile[]): void {
    if (this.resolved) return;
    this.resolved = true;
    this.deadline.clear();
    const controller = this.controller;
    if (controller && !controller.signal.aborted) controller.abort(EXECUTION_ENDED);
    const resources = {
      wallMs: performance.now() - this.startedAt,
      toolCalls: this.options.hostLimits ? this.toolCalls : (usage.toolCalls ?? 0),
      memoryBytes: usage.memoryBytes,
      ...(usage.cpuMs === undefined ? {} : { cpuMs: usage.cpuMs }),
    };
    const files = artifacts && artifacts.length > 0 ? { artifacts } : {};
    const logs = this.logs;
    const final: GuestEnd = this.override ? { status: 'failed', error: this.override } : end;
    this.options.onEnd(
      final.status === 'succeeded'
        ? { status: 'succeeded', value: final.value, logs, resources, ...files }
        : // A guest's error is bounded like its output and its result.
          { status: 'failed', error: boundError(final.error), logs, resources, ...files },
    );
  }

  private signalController(): AbortController {
    if (!this.controller) {
      this.controller = new AbortController();
      // Every tool call and timer of the execution listens on this one signal.
      setMaxListeners(0, this.controller.signal);
    }
    return this.controller;
  }

  private drain(): void {
    // A call whose host threw at once frees its slot synchronously: the outer loop goes on with the queue.
    if (this.draining) return;
    this.draining = true;
    while (this.running < this.limits.maxConcurrentToolCalls && !this.resolved) {
      const next = this.queue.shift();
      if (next === undefined) break;
      this.running += 1;
      void this.serve(next, true);
    }
    this.draining = false;
  }

  private async serve(c: C, slot: boolean): Promise<void> {
    let call: HostCall | null = null;
    let outcome: HostOutcome;
    try {
      call = this.transport.hostCall(c);
      outcome = await this.host.call(call, this.signalController().signal);
    } catch (thrown) {
      outcome = hostCallFailure(thrown);
    }
    if (!this.resolved) {
      const tool = call?.kind === 'tool' ? `${call.namespace}.${call.name}` : 'a timer';
      const { ok, payload } = encodeOutcome(outcome, tool);
      this.transport.deliver(c, ok, payload, outcome.clock ?? this.clock());
    }
    if (slot) {
      this.running -= 1;
      this.drain();
    }
  }
}
