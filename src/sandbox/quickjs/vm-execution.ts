import { failure } from '../../errors/index.ts';
import type { ExecutionLimits, GuestToolBinding, LogLevel, SerializedError } from '../../spec/index.ts';
import { cpuBudgetMs, logEntryBytes, longTimeout } from '../../spec/index.ts';
import { sha256Hex, TAG } from '../../codec/index.ts';
import type { LongTimer } from '../../spec/index.ts';
import type { PreparedVm, VmGuestHooks } from './prepared-vm.ts';
import type { FromWorker, OutCall, PausedImage } from './protocol.ts';
import { boundError } from '../bound-error.ts';
import { guestFailure } from '../guest-failure.ts';
import type { GuestReport } from '../guest-failure.ts';
import { prepareJavaScript, prepareProgram } from './transpile.ts';
import type { PreparedProgram } from './transpile.ts';
import { errorPosition, thrownFailure } from './error-position.ts';
import { imageOf } from './paused-vm.ts';
import type { ProgramSource } from './source-position.ts';
import { WorkerReplay } from './worker-replay.ts';
import type { ReplaySink, WorkerReplayStep } from './worker-replay.ts';

type Failure = SerializedError & { line?: number; column?: number };

/** A tagged value's key as it appears in the codec's JSON. */
const TAG_KEY = JSON.stringify(TAG);

const LOG_LEVELS = new Set<LogLevel>(['log', 'info', 'warn', 'error', 'debug']);

export interface ExecutionStart {
  code: string;
  language: 'javascript' | 'typescript' | 'python';
  filename: string;
  tools: readonly GuestToolBinding[];
  seed: number;
  clockMs: number;
  replay?: WorkerReplayStep[];
  /** The program with its types stripped already (TypeScript), or the SyntaxError stripping found. */
  stripped?: PreparedProgram;
}

/** One execution inside one worker: drives its VM and turns every way it can end into one `done` message. */
export class VmExecution implements VmGuestHooks, ReplaySink {
  private vm: PreparedVm | null = null;
  private replay: WorkerReplay | null = null;
  /** Calls whose outcomes a replay script does not hold back: reads of stored bodies (ADR 0046), never journaled. */
  private readonly direct = new Set<number>();
  /** Calls posted to the host and not answered yet: a paused VM's image lists them, to issue them again. */
  private readonly out = new Map<number, OutCall>();
  /** The VM's image, taken when the execution was aborted for a pause (`keepPaused`). */
  private paused: PausedImage | null = null;
  /** A resumed execution's program, prepared only if an error must be placed in it. */
  private unprepared: ExecutionStart | null = null;
  /** The program as written, the code the VM runs and how the two relate: to place errors in the former. */
  private program: { written: string; code: string; source: ProgramSource | undefined } | null = null;
  /** The tools, for an error naming one as if it were a global. */
  private tools: readonly GuestToolBinding[] = [];
  private failure: Failure | null = null;
  private success: string | null = null;
  private finished = false;
  private inGuest = false;
  private nextCallId = 1;
  private toolCalls = 0;
  private logBytes = 0;
  private peakMemory = 0;
  private guestMs = 0;
  /** When the current turn in the guest began (performance.now()). */
  private enteredAt = 0;
  private readonly cpuBudgetMs: number;
  private readonly deadline: number;
  private readonly wallTimer: LongTimer;

  constructor(
    readonly execId: number,
    private readonly slot: number,
    private readonly flags: Int32Array,
    private readonly limits: ExecutionLimits,
    private readonly filename: string,
    private readonly post: (msg: FromWorker, transfer?: ArrayBuffer[]) => void,
    private readonly onFinished: () => void,
  ) {
    this.deadline = performance.now() + limits.timeoutMs;
    this.cpuBudgetMs = cpuBudgetMs(limits);
    this.wallTimer = longTimeout(
      () => this.fail(failure('TIMEOUT', `the execution exceeded ${limits.timeoutMs} ms`)),
      limits.timeoutMs,
    );
  }

  get ended(): boolean {
    return this.finished || this.failure !== null || this.success !== null;
  }

  /** Runs the program up to its first wait. The VM is owned (and disposed) by this execution from now on. */
  begin(vm: PreparedVm, start: ExecutionStart): void {
    if (this.finished || this.failure) {
      vm.dispose();
      this.settle();
      return;
    }
    this.vm = vm;
    // TypeScript (and JavaScript over INLINE_PREPARE_CHARS) arrives prepared by type-stripper.ts, on a thread of
    // its own; smaller JavaScript is prepared here.
    const program =
      start.stripped ??
      (start.language === 'javascript'
        ? prepareJavaScript(start.code)
        : prepareProgram(start.code, start.language));
    if (!program.ok) {
      this.failure = program.error;
      this.settle();
      return;
    }
    const wrapped = program.code;
    this.program = { written: start.code, code: wrapped, source: program.source };
    this.tools = start.tools;
    vm.clockMs = start.clockMs;
    vm.hooks = this;
    if (start.replay) {
      const names = start.tools.map((t) => `${t.namespace}.${t.name}`);
      this.replay = new WorkerReplay(start.replay, names);
      this.replay.pump(this); // an empty script is through before the program starts
    }
    const q = vm.vm;
    this.guest(() => {
      const seed = q.newNumber(start.seed);
      const bindings = q.newString(JSON.stringify(start.tools));
      q.callFunction(vm.start, q.undefined, seed, bindings).dispose();
      seed.dispose();
      bindings.dispose();
      const fn = q.evalCode(wrapped, this.filename);
      q.callFunction(vm.run, q.undefined, fn).dispose();
      fn.dispose();
    });
  }

  /**
   * Takes up a paused VM (ADR 0056): the guest waits where it paused, with the host side of its execution as it
   * was; the calls that were out are posted again, with their ids, for the host to decide as in a replay.
   */
  resume(vm: PreparedVm, start: ExecutionStart, image: PausedImage): void {
    if (this.finished || this.failure) {
      vm.dispose();
      this.settle();
      return;
    }
    this.vm = vm;
    this.unprepared = start;
    this.tools = start.tools;
    vm.clockMs = image.clockMs;
    vm.hooks = this;
    this.nextCallId = image.nextCallId;
    this.toolCalls = image.toolCalls;
    this.guestMs = image.guestMs;
    this.logBytes = image.logBytes;
    this.peakMemory = image.peakMemory;
    for (const id of image.direct) this.direct.add(id);
    for (const call of image.out) {
      this.out.set(call.callId, call);
      const { callId, tool, payload, tooLarge } = call;
      this.post({
        type: 'call',
        execId: this.execId,
        callId,
        tool,
        payload,
        ...(tooLarge ? { tooLarge } : {}),
      });
    }
  }

  /**
   * Keeps the VM's image for a resume, when the execution is between guest turns with its replay through and the
   * image is at most `maxBytes`; the execution then ends as it would have.
   */
  keepPaused(maxBytes: number): void {
    const vm = this.vm;
    if (vm === null || this.ended || this.inGuest || this.replay?.through === false) return;
    this.paused = imageOf(vm, maxBytes, {
      nextCallId: this.nextCallId,
      toolCalls: this.toolCalls,
      guestMs: this.guestMs,
      logBytes: this.logBytes,
      peakMemory: this.peakMemory,
      out: [...this.out.values()],
      direct: [...this.direct].filter((id) => this.out.has(id)),
    });
  }

  /** A host outcome; while a replay script runs it waits for the script's end. */
  deliver(callId: number, ok: boolean, payload: string, clockMs: number): void {
    if (!this.direct.delete(callId) && this.replay?.hold(callId, ok, payload, clockMs)) return;
    this.deliverNow(callId, ok, payload, clockMs);
  }

  deliverNow(callId: number, ok: boolean, payload: string, clockMs: number): void {
    const vm = this.vm;
    if (this.finished || vm === null) return;
    this.out.delete(callId);
    vm.clockMs = clockMs;
    const q = vm.vm;
    // Whether the payload holds a tag is told here (V8 scans a string far faster than the interpreter).
    const tagged = ok && payload.includes(TAG_KEY);
    this.guest(() => {
      const id = q.newNumber(callId);
      const body = q.newString(payload);
      q.callFunction(
        vm.deliver,
        q.undefined,
        id,
        ok ? q.true : q.false,
        body,
        tagged ? q.true : q.false,
      ).dispose();
      id.dispose();
      body.dispose();
    });
  }

  announceReplayDone(): void {
    this.post({ type: 'replayDone', execId: this.execId });
  }

  /** Ends the execution with `error`: at once when idle, at the guest's next interrupt check otherwise. */
  fail(error: Failure): void {
    if (this.finished) return;
    if (!this.failure && this.success === null) this.failure = error;
    if (!this.inGuest) this.settle();
  }

  shouldInterrupt(): boolean {
    // Also a memory sample (a constant-time counter): the peak of a turn that allocates and frees before it ends
    // was reported as what was left at its end.
    this.sampleMemory();
    return (
      this.failure !== null ||
      this.success !== null ||
      Atomics.load(this.flags, this.slot) !== 0 ||
      performance.now() > this.deadline ||
      this.cpuSpent()
    );
  }

  /** Whether the guest computed past its CPU budget (its time in the interpreter, this turn included). */
  private cpuSpent(): boolean {
    const now = this.inGuest ? performance.now() - this.enteredAt : 0;
    return this.guestMs + now > this.cpuBudgetMs;
  }

  onCall(tool: number, payload: string): number {
    if (this.finished || this.failure || this.success !== null) return 0;
    this.toolCalls += 1;
    if (this.toolCalls > this.limits.maxToolCalls) {
      this.fail(
        failure('TOOL_CALL_LIMIT', `the execution made more than ${this.limits.maxToolCalls} tool calls`),
      );
      return 0;
    }
    this.sampleMemory();
    const callId = this.nextCallId++;
    if (this.replay?.claim(callId, tool, payload)) return callId; // answered by the script after this turn
    const binding = tool >= 0 ? this.tools[tool] : undefined;
    if (this.replay && binding?.namespace === 'egress' && binding.name === 'body') this.direct.add(callId);
    // Arguments over the bound stay in this worker: the host gets their size and digest (tool index -1 is a timer).
    const tooLarge = tool >= 0 ? argumentsOver(payload, this.limits.toolArgumentBytes) : null;
    if (tooLarge) this.post({ type: 'call', execId: this.execId, callId, tool, payload: '', tooLarge });
    else this.post({ type: 'call', execId: this.execId, callId, tool, payload });
    this.out.set(callId, tooLarge ? { callId, tool, payload: '', tooLarge } : { callId, tool, payload });
    return callId;
  }

  onCancel(callId: number): void {
    // A call the replay script answers never reached the host: the host ignores an id it is not serving.
    if (this.finished || this.failure || this.success !== null) return;
    this.post({ type: 'cancel', execId: this.execId, callId });
  }

  onLog(level: string, message: string): void {
    if (this.finished || this.failure) return;
    this.logBytes += logEntryBytes(message);
    if (this.logBytes > this.limits.outputBytes) {
      this.fail(failure('OUTPUT_LIMIT', `console output exceeded ${this.limits.outputBytes} bytes`));
      return;
    }
    const lvl = LOG_LEVELS.has(level as LogLevel) ? (level as LogLevel) : 'log';
    this.post({ type: 'log', execId: this.execId, level: lvl, message });
  }

  onDone(ok: boolean, payload: string): void {
    if (this.finished || this.failure || this.success !== null) return;
    if (ok) {
      if (payload.length > this.limits.resultBytes) {
        this.failure = failure('RESULT_LIMIT', `the result exceeded ${this.limits.resultBytes} bytes`);
      } else {
        this.success = payload;
      }
      return;
    }
    // Once the deadline passed or an interrupt was asked for, how the guest ended is moot: a promise job can
    // turn QuickJS's uncatchable interrupt into an ordinary rejection, which must not read as a guest error.
    // Bounded here already: a huge message never crosses to the main thread.
    this.failure = this.interruptFailure() ?? boundError(this.guestFailure(payload));
  }

  private interruptFailure(): Failure | null {
    if (performance.now() > this.deadline) {
      return failure('TIMEOUT', `the execution exceeded ${this.limits.timeoutMs} ms`);
    }
    if (Atomics.load(this.flags, this.slot) !== 0) {
      return failure('INTERRUPTED', 'the execution was interrupted');
    }
    if (this.cpuSpent()) {
      return failure('CPU_LIMIT', `the program computed for more than ${this.cpuBudgetMs} ms of CPU time`);
    }
    return null;
  }

  private guestFailure(payload: string): Failure {
    let e: GuestReport & { stack?: unknown };
    try {
      e = JSON.parse(payload) as typeof e;
    } catch {
      e = {};
    }
    const at = this.positionIn(typeof e.stack === 'string' ? e.stack : '');
    return guestFailure(e, at?.line, at?.column, this.tools);
  }

  /** Where the first frame of the program in `text` is, in the program as written (error-position.ts). */
  private positionIn(text: string): { line: number; column?: number } | undefined {
    const start = this.unprepared;
    if (start && !this.program) {
      const program =
        start.stripped ??
        (start.language === 'javascript'
          ? prepareJavaScript(start.code)
          : prepareProgram(start.code, start.language));
      if (program.ok) this.program = { written: start.code, code: program.code, source: program.source };
    }
    return errorPosition(text, this.filename, this.program);
  }

  private guest(fn: () => void): void {
    const vm = this.vm;
    if (this.finished || vm === null) return;
    this.inGuest = true;
    const entered = performance.now();
    this.enteredAt = entered;
    try {
      fn();
      vm.vm.executePendingJobs();
    } catch (thrown) {
      this.classify(thrown);
    } finally {
      this.inGuest = false;
      // Time inside the interpreter, on this worker's thread: the guest's computing, not its waiting.
      this.guestMs += performance.now() - entered;
    }
    this.sampleMemory();
    this.replay?.pump(this);
    this.settle();
  }

  private classify(thrown: unknown): void {
    if (this.failure || this.success !== null) return;
    this.failure = thrownFailure(thrown, {
      memoryBytes: this.limits.memoryBytes,
      stackExhausted: () => this.vm?.stackExhausted() ?? false,
      interrupted: () => this.interruptFailure(),
      positionIn: (text) => this.positionIn(text),
    });
  }

  private sampleMemory(): void {
    if (!this.vm) return;
    try {
      this.peakMemory = Math.max(this.peakMemory, this.vm.vm.getAllocatedSize());
    } catch {
      // A trapped VM cannot report its size.
    }
  }

  private settle(): void {
    if (this.finished || this.inGuest) return;
    if (!this.failure && this.success === null) return;
    this.finished = true;
    this.wallTimer.clear();
    const disposing = performance.now();
    this.vm?.dispose();
    const vm = this.vm
      ? { vm: { createMs: this.vm.createMs, disposeMs: performance.now() - disposing } }
      : {};
    const resources = { memoryBytes: this.peakMemory, toolCalls: this.toolCalls, cpuMs: this.guestMs };
    if (this.failure) {
      const paused = this.paused;
      this.post(
        {
          type: 'done',
          execId: this.execId,
          ok: false,
          payload: '',
          error: this.failure,
          resources,
          ...vm,
          ...(paused ? { paused } : {}),
        },
        paused ? [paused.memory.buffer as ArrayBuffer] : undefined,
      );
    } else {
      this.post({
        type: 'done',
        execId: this.execId,
        ok: true,
        payload: this.success ?? '',
        error: null,
        resources,
        ...vm,
      });
    }
    this.onFinished();
  }
}

/** The size and digest of encoded arguments over `max` UTF-8 bytes, else null (no bound: null). */
function argumentsOver(payload: string, max: number | undefined): { bytes: number; sha256: string } | null {
  if (max === undefined || payload.length <= max / 3) return null;
  const bytes = Buffer.byteLength(payload);
  return bytes > max ? { bytes, sha256: sha256Hex(payload) } : null;
}
