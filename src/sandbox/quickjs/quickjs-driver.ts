import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { CodecallError, failure, isCodecallError } from '../../errors/index.ts';
import type {
  ExecuteOptions,
  ExecutionLimits,
  ExecutionRequest,
  ExecutionResult,
  GuestLanguage,
  SandboxDriver,
  SandboxObserver,
} from '../../spec/index.ts';
import { SANDBOX_DRIVER_API_VERSION } from '../../spec/index.ts';
import { abortFailure, failedBeforeStart } from '../early-failure.ts';
import { DEFAULT_LIMITS, resolveLimits } from '../../spec/index.ts';
import { HostExecution } from './host-execution.ts';
import { intlEngine } from './intl-host.ts';
import { SandboxWorker } from './sandbox-worker.ts';
import type { WorkerListener } from './sandbox-worker.ts';
import { fencedAsTypeScript } from '../fenced-program.ts';
import type { PreparedProgram } from './transpile.ts';
import { STRIP_TIME_LIMIT_MS, TypeStripper } from './type-stripper.ts';
import { toWorkerSteps } from './worker-replay.ts';
import type { WorkerReplayStep } from './worker-replay.ts';
import type { PausedImage } from './protocol.ts';
import { pausedImageOf, pausedVm } from './paused-vm.ts';

export const DEFAULT_WARM_VMS_PER_WORKER = 4;

/**
 * JavaScript up to this many characters is prepared (parsed, see transpile.ts) on the sandbox worker that runs
 * it; a larger program is prepared on the type-stripping thread, like TypeScript: a crafted program of the largest
 * allowed size takes seconds and more heap than a sandbox worker has to parse, and stalls or kills its neighbours.
 */
export const INLINE_PREPARE_CHARS = 16 * 1024;

export interface QuickJsDriverOptions {
  /** Worker threads; default the number of CPUs. */
  workers?: number;
  /** Fresh VMs each worker keeps ready so an execution does not wait for instantiation. */
  warmVmsPerWorker?: number;
  /** Limits applied where a request does not set its own. */
  defaultLimits?: Partial<ExecutionLimits>;
  /** Heap for each worker thread's own JavaScript (default 128 MiB; guests' memory is outside it). */
  workerHeapMb?: number;
  /**
   * How long a worker polls for a tool call's answer before sleeping (default 250 us). Polling avoids the
   * thread wake-up latency on quick tools; 0 turns it off (less CPU when every tool is slow).
   */
  spinMicros?: number;
  /**
   * After delivering a tool outcome, how long the main thread waits for the guest's next message before
   * returning to its event loop (default 100 us; only while no more executions run than there are workers).
   */
  mainSpinMicros?: number;
  /**
   * The longest stripping one TypeScript program's types may take (default 5 s) before it fails with
   * SOURCE_TOO_COMPLEX; it runs on a thread of its own, which is replaced when a program overruns.
   */
  typeStripTimeoutMs?: number;
  /** Told how long each execution's VM took to create and to dispose (measured in the worker thread). */
  observer?: SandboxObserver;
  /**
   * The worker threads' nice value on Linux (0-19, default 0: the process's own). Higher, a guest's CPU-bound
   * code yields the cores to the main thread, which serves every tenant's requests and the store (ADR 0033).
   */
  threadNice?: number;
}

export const DEFAULT_MAIN_SPIN_MICROS = 100;

export const DEFAULT_SPIN_MICROS = 250;

/** The default sandbox: QuickJS compiled to WebAssembly, one fresh VM per execution, in worker threads. */
/**
 * Old-generation heap of a worker thread. Guests live in Wasm memory outside it; what it holds is the host side of
 * executions. A smaller heap makes V8 collect dropped VMs sooner: at 256 MiB, 10,000 executions left ~50-70 MiB of
 * garbage in RSS; at 128 MiB ~30 MiB (docs/benchmarks.md).
 */
export const DEFAULT_WORKER_HEAP_MB = 128;

export class QuickJsDriver implements SandboxDriver {
  readonly name = 'quickjs';
  readonly apiVersion = SANDBOX_DRIVER_API_VERSION;
  readonly engine = `quickjs-wasi@${(createRequire(import.meta.url)('quickjs-wasi/package.json') as { version: string }).version}+${intlEngine()}`;
  readonly languages: readonly GuestLanguage[] = ['javascript', 'typescript'];
  /** Replay scripts are served inside the worker thread: no main-thread round trip per recorded call. */
  readonly supportsReplayScript = true;
  /** A paused execution's VM can be kept and resumed (ADR 0056): JavaScript prepared on the worker only. */
  readonly keepsPausedVms = true;
  private readonly workers: SandboxWorker[] = [];
  private readonly executions = new Map<number, HostExecution>();
  private readonly defaults: ExecutionLimits;
  private readonly size: number;
  private readonly warmVms: number;
  private readonly heapMb: number;
  private readonly spinMicros: number;
  private readonly mainSpinMicros: number;
  private readonly nice: number;
  private readonly observer: SandboxObserver | undefined;
  private readonly stripper: TypeStripper;
  private nextExecId = 1;
  private rotation = 0;
  private closed = false;
  private readonly listener: WorkerListener = {
    onMessage: (msg) => {
      if (msg.type === 'done' && msg.vm && this.observer) observeVm(this.observer, msg.vm);
      this.executions.get(msg.execId)?.onMessage(msg);
    },
    onExit: (worker, reason) => this.onWorkerExit(worker, reason),
  };

  constructor(options: QuickJsDriverOptions = {}) {
    this.defaults = resolveLimits(options.defaultLimits, DEFAULT_LIMITS);
    this.size = positiveInt('workers', options.workers ?? availableParallelism());
    this.warmVms = Math.max(0, Math.floor(options.warmVmsPerWorker ?? DEFAULT_WARM_VMS_PER_WORKER));
    this.heapMb = positiveInt('workerHeapMb', options.workerHeapMb ?? DEFAULT_WORKER_HEAP_MB);
    this.spinMicros = Math.max(0, Math.floor(options.spinMicros ?? DEFAULT_SPIN_MICROS));
    this.mainSpinMicros = Math.max(0, Math.floor(options.mainSpinMicros ?? DEFAULT_MAIN_SPIN_MICROS));
    this.observer = options.observer;
    this.nice = Math.min(19, Math.max(0, Math.floor(options.threadNice ?? 0)));
    this.stripper = new TypeStripper(
      positiveInt('typeStripTimeoutMs', options.typeStripTimeoutMs ?? STRIP_TIME_LIMIT_MS),
    );
    for (let i = 0; i < this.size; i++) this.workers.push(this.spawn());
  }

  /** Resolves when every worker has its warm VMs ready. */
  async ready(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.ready));
  }

  execute(request: ExecutionRequest, options: ExecuteOptions = {}): Promise<ExecutionResult> {
    if (this.closed) return Promise.reject(new CodecallError('POOL_CLOSED', 'the quickjs driver is closed'));
    let limits: ExecutionLimits;
    try {
      limits = resolveLimits(request.limits, this.defaults);
    } catch (e) {
      return Promise.resolve(
        failedBeforeStart(failure(isCodecallError(e) ? e.code : 'INVALID_ARGUMENT', (e as Error).message)),
      );
    }
    if (Buffer.byteLength(request.code) > limits.sourceBytes) {
      return Promise.resolve(
        failedBeforeStart(
          failure('SOURCE_TOO_LARGE', `the program is larger than ${limits.sourceBytes} bytes`),
        ),
      );
    }
    if (!this.languages.includes(request.language)) {
      return Promise.resolve(
        failedBeforeStart(failure('INVALID_ARGUMENT', `the quickjs driver does not run ${request.language}`)),
      );
    }
    const signal = options.signal;
    if (signal?.aborted) return Promise.resolve(failedBeforeStart(abortFailure(signal.reason)));
    if (request.resumeFrom) {
      const image = pausedImageOf(request.resumeFrom, this.engine);
      if (typeof image === 'string')
        return Promise.resolve(failedBeforeStart(failure('INVALID_ARGUMENT', image)));
      return this.start(request, limits, { resume: image }, signal);
    }
    const replay = request.replay ? toWorkerSteps(request.replay) : undefined;
    if (typeof replay === 'string')
      return Promise.resolve(failedBeforeStart(failure('INVALID_ARGUMENT', replay)));

    // A program that is one block fenced as TypeScript (```ts) is TypeScript, whatever the request says.
    const language =
      request.language === 'typescript' || fencedAsTypeScript(request.code) ? 'typescript' : 'javascript';
    if (language === 'javascript' && request.code.length <= INLINE_PREPARE_CHARS) {
      // Only a program the worker prepares itself is kept: a resume never needs the stripping thread.
      const keep = request.keepPausedVm?.maxBytes;
      return this.start(request, limits, { replay, ...(keep ? { keepPaused: keep } : {}) }, signal);
    }
    // Prepared on a thread of its own (never a sandbox worker's), within the execution's time.
    const budgetMs = limits.timeoutMs;
    return this.stripper.strip(request.code, { budgetMs, signal, language }).then((outcome) => {
      if (signal?.aborted) return failedBeforeStart(abortFailure(signal.reason));
      if (outcome.kind === 'failed') return failedBeforeStart(outcome.error);
      if (this.closed) return failedBeforeStart(failure('POOL_CLOSED', 'the driver closed'));
      return this.start(request, limits, { replay, stripped: outcome.program }, signal);
    });
  }

  private start(
    request: ExecutionRequest,
    limits: ExecutionLimits,
    how: {
      replay?: WorkerReplayStep[] | undefined;
      stripped?: PreparedProgram;
      keepPaused?: number;
      resume?: PausedImage;
    },
    signal: AbortSignal | undefined,
  ): Promise<ExecutionResult> {
    const { replay, stripped, keepPaused, resume } = how;
    const worker = this.pick();
    const slot = worker.takeSlot();
    const execId = this.nextExecId++;
    return new Promise<ExecutionResult>((resolve) => {
      const onAbort = (): void => exec.abort(abortFailure(signal?.reason));
      const exec = new HostExecution(
        execId,
        worker,
        slot,
        request,
        limits,
        (result) => {
          this.executions.delete(execId);
          signal?.removeEventListener('abort', onAbort);
          if (worker.alive) worker.releaseSlot(slot);
          const paused = exec.paused;
          resolve(
            paused && result.status === 'failed'
              ? { ...result, paused: pausedVm(paused, this.engine) }
              : result,
          );
        },
        {
          onStuck: (stuck) => void stuck.terminate(),
          afterDeliver: (w) => {
            // Poll only while the pool is lightly loaded: then the main thread has nothing better to do.
            if (this.mainSpinMicros > 0 && this.executions.size <= this.workers.length)
              w.pollOnce(this.mainSpinMicros);
          },
          quickAnswerMs: this.mainSpinMicros / 2000,
        },
      );
      this.executions.set(execId, exec);
      signal?.addEventListener('abort', onAbort, { once: true });
      worker.send(
        {
          type: 'start',
          execId,
          slot,
          code: request.code,
          language: request.language,
          filename: request.filename ?? (request.language === 'typescript' ? 'program.ts' : 'program.js'),
          tools: request.tools.map((t) => ({
            namespace: t.namespace,
            name: t.name,
            ...(t.params ? { params: [...t.params] } : {}),
          })),
          limits,
          seed: request.seed ?? Math.floor(Math.random() * 2 ** 31),
          clockMs: exec.readClock(),
          ...(replay ? { replay } : {}),
          ...(stripped ? { stripped } : {}),
          ...(keepPaused ? { keepPaused } : {}),
          ...(resume ? { resume } : {}),
        },
        resume ? [resume.memory.buffer as ArrayBuffer] : undefined,
      );
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const exec of this.executions.values()) exec.abort(failure('POOL_CLOSED', 'the driver closed'));
    await Promise.all([...this.workers.map((w) => w.terminate()), this.stripper.close()]);
  }

  private spawn(): SandboxWorker {
    return new SandboxWorker(
      {
        warmVms: this.warmVms,
        defaultMemoryBytes: this.defaults.memoryBytes,
        maxOldGenerationMb: this.heapMb,
        stackSizeMb: 4,
        spinMicros: this.spinMicros,
        nice: this.nice,
      },
      this.listener,
    );
  }

  private pick(): SandboxWorker {
    // Fewest active executions wins; ties rotate, so a worker that just finished can refill its warm VMs
    // while the next execution starts on another.
    let best: SandboxWorker | undefined;
    const n = this.workers.length;
    for (let i = 0; i < n; i++) {
      const w = this.workers[(this.rotation + i) % n];
      if (w?.alive && w.hasFreeSlot && (best === undefined || w.active < best.active)) best = w;
    }
    this.rotation = (this.rotation + 1) % n;
    if (!best) throw new CodecallError('SANDBOX_UNAVAILABLE', 'every sandbox worker is at capacity');
    return best;
  }

  private onWorkerExit(worker: SandboxWorker, reason: string): void {
    for (const exec of [...this.executions.values()]) {
      if (exec.worker === worker) exec.onWorkerLost(reason);
    }
    const index = this.workers.indexOf(worker);
    if (index >= 0 && !this.closed) this.workers[index] = this.spawn();
  }
}

function observeVm(observer: SandboxObserver, vm: { createMs: number; disposeMs: number }): void {
  try {
    observer.sandboxCreated?.(vm.createMs / 1000);
    observer.sandboxDestroyed?.(vm.disposeMs / 1000);
  } catch {
    // An observer's failure is its own.
  }
}

function positiveInt(field: string, value: number): number {
  if (!Number.isInteger(value) || value <= 0) {
    throw new CodecallError('INVALID_ARGUMENT', `${field} must be a positive integer`, {
      details: { field },
    });
  }
  return value;
}
