import { Worker } from 'node:worker_threads';
import { sha256Hex } from '../../codec/index.ts';
import { failure } from '../../errors/index.ts';
import type { PreparedProgram } from './transpile.ts';

/**
 * The longest stripping one program may take. A crafted program makes sucrase backtrack exponentially (each
 * `<T>(` doubles the work); a real one of the largest allowed size takes a small fraction of this.
 */
export const STRIP_TIME_LIMIT_MS = 5_000;
/** Stripped programs kept (an agent resubmits the same code on every resume and replay). */
const CACHE_ENTRIES = 256;
const CACHE_BYTES = 32 * 1024 * 1024;
/** Sucrase's own heap: a program past it fails as too complex rather than taking the process down. */
const STRIP_HEAP_MB = 256;
/**
 * The longest the thread may take to load the TypeScript compiler (the first program with a namespace or
 * decorators; ~0.5 s on an idle machine). The load is the driver's cost, not the program's: its time is not
 * counted against the program's.
 */
export const COMPILER_LOAD_LIMIT_MS = 20_000;

interface Job {
  readonly key: string;
  readonly code: string;
  readonly language: 'javascript' | 'typescript';
  readonly budgetMs: number;
  readonly signal: AbortSignal | undefined;
  readonly resolve: (outcome: StripOutcome) => void;
}

/** A stripped program, or the failure that ends the execution before it starts (abort, time). */
export type StripOutcome = { readonly kind: 'program'; readonly program: PreparedProgram } | FailedStrip;
type FailedStrip = { readonly kind: 'failed'; readonly error: ReturnType<typeof failure> };

/**
 * Strips TypeScript types on a thread of its own, one program at a time: a transform that does not finish in
 * time is stopped by terminating that thread (the next program gets a new one), so it never holds a sandbox
 * worker and the executions on it. Results are cached by the program's hash (least recently used goes first).
 */
export class TypeStripper {
  constructor(private readonly timeLimitMs = STRIP_TIME_LIMIT_MS) {}

  private worker: Worker | null = null;
  private ready: Promise<void> | null = null;
  private readonly queue: Job[] = [];
  private current: Current | null = null;
  private readonly cache = new Map<string, StripOutcome>();
  private cachedBytes = 0;
  private nextId = 1;
  private closed = false;

  /**
   * Prepares `code` (transpile.ts) within `budgetMs` (the execution's timeout) and the stripper's own time limit:
   * TypeScript, and JavaScript too large to parse on a sandbox worker (see INLINE_PREPARE_BYTES).
   */
  strip(
    code: string,
    options: { budgetMs: number; signal?: AbortSignal | undefined; language?: 'javascript' | 'typescript' },
  ): Promise<StripOutcome> {
    const language = options.language ?? 'typescript';
    const key = sha256Hex(language === 'typescript' ? code : `${language}\n${code}`);
    const cached = this.cache.get(key);
    if (cached) {
      this.cache.delete(key);
      this.cache.set(key, cached);
      return Promise.resolve(cached);
    }
    return new Promise((resolve) => {
      const signal = options.signal;
      const onAbort = (): void => this.abandon(job);
      const job: Job = {
        key,
        code,
        language,
        budgetMs: options.budgetMs,
        signal,
        resolve: (outcome) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(outcome);
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.queue.push(job);
      this.pump();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) job.resolve(closedOutcome());
    if (this.current) this.finish(closedOutcome());
    await this.stopWorker();
  }

  private pump(): void {
    if (this.current || this.closed) return;
    const job = this.queue.shift();
    if (!job) return;
    void this.start(job);
  }

  private async start(job: Job): Promise<void> {
    const id = this.nextId++;
    const current: Current = { job, id };
    this.current = current;
    const worker = this.spawnIfNeeded();
    // Busy (starting or stripping): the thread keeps the process alive; idle, it does not.
    worker.ref();
    await this.ready;
    // Closed, or the thread died while starting (the job was then given its failure).
    if (this.current !== current || this.worker !== worker) return;
    const limitMs = Math.min(job.budgetMs, this.timeLimitMs);
    current.deadline = performance.now() + limitMs;
    current.timer = setTimeout(() => this.overrun(limitMs, job.budgetMs <= this.timeLimitMs), limitMs);
    worker.postMessage({ id, code: job.code, language: job.language });
  }

  /**
   * The thread loads the TypeScript compiler for this program (`loading`), then has it (`loaded`): the program's
   * clock stops in between, and the load has a limit of its own.
   */
  private onCompilerLoad(current: Current, loaded: boolean): void {
    const job = current.job;
    const limitMs = Math.min(job.budgetMs, this.timeLimitMs);
    clearTimeout(current.timer);
    if (!loaded) {
      current.paused = Math.max(0, (current.deadline ?? 0) - performance.now());
      const message = `loading the TypeScript compiler took longer than ${COMPILER_LOAD_LIMIT_MS} ms`;
      current.timer = setTimeout(() => {
        void this.stopWorker();
        this.finish(failed(failure('SANDBOX_UNAVAILABLE', message)));
      }, COMPILER_LOAD_LIMIT_MS);
      return;
    }
    const remaining = current.paused ?? 0;
    current.deadline = performance.now() + remaining;
    current.timer = setTimeout(() => this.overrun(limitMs, job.budgetMs <= this.timeLimitMs), remaining);
  }

  private onMessage(msg: StripMessage): void {
    if (!this.current || msg.id !== this.current.id) return;
    if (msg.loading !== undefined) {
      this.onCompilerLoad(this.current, msg.loading === 'done');
      return;
    }
    if (!msg.program) return;
    const outcome: StripOutcome = { kind: 'program', program: msg.program };
    this.remember(this.current.job.key, outcome);
    this.finish(outcome);
  }

  /** The transform ran past its time: its thread goes, and the program fails. */
  private overrun(limitMs: number, isExecutionTimeout: boolean): void {
    void this.stopWorker();
    if (isExecutionTimeout) {
      const message = `the execution exceeded ${limitMs} ms while ${preparing(this.current?.job)}`;
      this.finish(failed(failure('TIMEOUT', message)));
      return;
    }
    // Past the cap the program is at fault, not the load: the same program fails at once from now on.
    const message = `${preparing(this.current?.job, true)} took longer than ${limitMs} ms`;
    const outcome = failed(failure('SOURCE_TOO_COMPLEX', message));
    if (this.current) this.remember(this.current.job.key, outcome);
    this.finish(outcome);
  }

  private onExit(worker: Worker, reason: string): void {
    if (this.worker !== worker) return;
    this.worker = null;
    this.ready = null;
    // A transform that ran out of its heap is the program's doing, like one that ran out of time.
    if (this.current) {
      this.finish(
        failed(failure('SOURCE_TOO_COMPLEX', `${preparing(this.current.job, true)} failed: ${reason}`)),
      );
    }
  }

  private finish(outcome: StripOutcome): void {
    const current = this.current;
    if (!current) return;
    clearTimeout(current.timer);
    this.current = null;
    this.worker?.unref();
    current.job.resolve(outcome);
    this.pump();
  }

  /** An aborted caller stops waiting; a transform already running finishes (and is cached) for the next. */
  private abandon(job: Job): void {
    const at = this.queue.indexOf(job);
    if (at >= 0) this.queue.splice(at, 1);
    job.resolve(failed(failure('ABORTED', 'the execution was aborted while its types were stripped')));
  }

  private remember(key: string, outcome: StripOutcome): void {
    const size = outcomeBytes(outcome);
    if (size > CACHE_BYTES) return;
    this.cache.set(key, outcome);
    this.cachedBytes += size;
    for (const [oldest, value] of this.cache) {
      if (this.cache.size <= CACHE_ENTRIES && this.cachedBytes <= CACHE_BYTES) break;
      this.cache.delete(oldest);
      this.cachedBytes -= outcomeBytes(value);
    }
  }

  private spawnIfNeeded(): Worker {
    if (this.worker) return this.worker;
    const worker = spawnStripWorker();
    let markReady: () => void = () => undefined;
    this.ready = new Promise((resolve) => (markReady = resolve));
    worker.on('message', (msg: StripMessage & { ready?: boolean }) => {
      if (msg.ready) markReady();
      else this.onMessage(msg);
    });
    worker.on('error', (err) => {
      markReady();
      this.onExit(worker, err.message);
    });
    worker.on('exit', (code) => {
      markReady();
      this.onExit(worker, `the type-stripping thread exited with code ${code}`);
    });
    worker.unref();
    this.worker = worker;
    return worker;
  }

  private async stopWorker(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    this.ready = null;
    if (worker) await worker.terminate();
  }
}

interface Current {
  readonly job: Job;
  readonly id: number;
  timer?: NodeJS.Timeout;
  /** When the program's time runs out (performance.now()). */
  deadline?: number;
  /** While the compiler loads: the program's time that was left. */
  paused?: number;
}

/** What the stripping thread says about a program: that it loads the compiler, or the program stripped. */
interface StripMessage {
  readonly id?: number;
  /** The thread starts (`start`) or ends (`done`) loading the TypeScript compiler for this program. */
  readonly loading?: 'start' | 'done';
  readonly program?: PreparedProgram;
}

/** What the thread was doing for `job`, for a message: stripping types, or parsing a large JavaScript program. */
function preparing(job: Job | undefined, subject = false): string {
  if (job?.language === 'javascript') return subject ? 'parsing the program' : 'the program was parsed';
  return subject ? "stripping the program's TypeScript types" : 'its TypeScript types were stripped';
}

function outcomeBytes(outcome: StripOutcome): number {
  if (outcome.kind === 'failed') return outcome.error.message.length;
  const program = outcome.program;
  if (!program.ok) return program.error.message.length;
  const map = typeof program.source?.stripped === 'object' ? program.source.stripped.sourceMap.length : 0;
  const edits = program.source?.edits.reduce((n, e) => n + e.inserted.length + e.removed.length + 16, 0) ?? 0;
  return program.code.length + map + edits;
}

function failed(error: ReturnType<typeof failure>): FailedStrip {
  return { kind: 'failed', error };
}

function closedOutcome(): FailedStrip {
  return failed(failure('POOL_CLOSED', 'the driver closed'));
}

function spawnStripWorker(): Worker {
  // From source (tests, tsx) the entry is TypeScript: load it through tsx's loader, as sandbox-worker.ts does.
  const fromSource = import.meta.url.endsWith('.ts');
  const entry = new URL(fromSource ? './strip-worker-main.ts' : './strip-worker-main.js', import.meta.url);
  const options = {
    execArgv: [],
    stdout: false,
    stderr: false,
    resourceLimits: { maxOldGenerationSizeMb: STRIP_HEAP_MB },
  };
  return fromSource
    ? new Worker(
        `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(entry.href)}); })`,
        { ...options, eval: true },
      )
    : new Worker(entry, options);
}
