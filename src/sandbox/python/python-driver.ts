import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { CodecallError, failure, isCodecallError } from '../../errors/index.ts';
import { SANDBOX_DRIVER_API_VERSION } from '../../spec/index.ts';
import type {
  ExecuteOptions,
  ExecutionLimits,
  ExecutionRequest,
  ExecutionResult,
  GuestLanguage,
  SandboxDriver,
} from '../../spec/index.ts';
import { failedBeforeStart } from '../early-failure.ts';
import { DEFAULT_LIMITS, resolveLimits } from '../../spec/index.ts';
import { isLibraryPattern, isWorkspaceName, LIBRARY_PATTERN_HELP } from '../../spec/index.ts';
import { toWorkerSteps } from '../replay-steps.ts';
import { probePython, pythonEngine } from './probe.ts';
import type { PythonProbe } from './probe.ts';
import { runOnProcess } from './python-execution.ts';
import { CGROUP_ALLOWANCE_BYTES } from './execution-terms.ts';
import { compiledRunner } from './runner-code.ts';
import { seccompFilter } from './seccomp-filter.ts';
import { detectCgroups } from './cgroups.ts';
import type { CgroupManager } from './cgroups.ts';
import { PythonProcess } from './python-process.ts';
import { ServerReturns } from './fork-server-pool.ts';
import { makeEmptyFile } from './proc-masks.ts';
import {
  defaultCacheDir,
  FONT_CACHE_PROGRAM,
  fontCacheDir,
  isFontListName,
  readFontList,
  saveFontList,
  stageFontList,
} from './font-cache.ts';
import type { FontList } from './font-cache.ts';
import type { ParkedProcess, ProcessOptions } from './python-process.ts';

export interface PythonDriverOptions {
  /** Interpreters started ahead of use (each runs one execution). Default 2. */
  readonly warm?: number;
  readonly bwrap?: string;
  /** Must live under /usr, which is what the sandbox sees of the host. Default /usr/bin/python3. */
  readonly python?: string;
  readonly defaultLimits?: Partial<ExecutionLimits>;
  /** Size of each sandbox's workspace (a tmpfs: input files, what the program writes). Default 64 MiB. */
  readonly workspaceBytes?: number;
  /** Put each sandbox in a cgroup of its own where this machine allows (memory, pids). Default true. */
  readonly cgroups?: boolean;
  /** What probePython() already found (so a caller that checked first does not start a probe sandbox again). */
  readonly probe?: PythonProbe;
  /**
   * Where matplotlib's font list is kept between processes (font-cache.ts). Default: codecall's cache directory
   * (CODECALL_CACHE_DIR, else $XDG_CACHE_HOME/codecall, else ~/.cache/codecall); false: no list, each chart
   * builds its own.
   */
  readonly fontCacheDir?: string | false;
  /**
   * Each sandbox is a fork server (ADR 0061): its interpreter, loaded once, forks every execution's process with
   * namespaces, mounts and a filter of its own, and serves the next execution once the last one ended with its
   * result (any other end kills the sandbox, as before). Default false: each execution gets a sandbox of its own.
   */
  readonly forkServer?: boolean;
}

/** Processes (and threads) one sandbox may have at once, when it has a cgroup. */
export const CGROUP_PIDS = 64;

export const DEFAULT_WORKSPACE_BYTES = 64 * 1024 * 1024;

/** The interpreter and pandas need more than a QuickJS heap; the limit counts what the program adds. */
export const PYTHON_DEFAULT_LIMITS: Readonly<ExecutionLimits> = Object.freeze({
  ...DEFAULT_LIMITS,
  memoryBytes: 512 * 1024 * 1024,
});

export const DEFAULT_WARM_INTERPRETERS = 2;

/** The abort reason of the executions close() ends (its code is their failure's code). */
const CLOSED = { code: 'POOL_CLOSED', message: 'the python driver closed' };

/** How long an execution may run before the pool starts replacing the interpreter it took. */
const REFILL_DELAY_MS = 25;

/** CPython in bubblewrap; see bwrap-args.ts for the sandbox and guest-runner.ts for the guest side. */
export class PythonDriver implements SandboxDriver {
  readonly name = 'python';
  readonly apiVersion = SANDBOX_DRIVER_API_VERSION;
  readonly languages: readonly GuestLanguage[] = ['python'];
  /** The sandbox's runner serves replay scripts (ADR 0010): replayed calls cost no host round trip. */
  readonly supportsReplayScript = true;
  private probe: PythonProbe | null = null;
  /** One sandbox spawned into its cgroup ahead, for the next cold start (with cgroups only). */
  private parked: Promise<ParkedProcess> | null = null;
  /** The runner as this interpreter compiled it, when it could. */
  private runnerCode: Buffer | null = null;
  private probing: Promise<PythonProbe> | null = null;
  private readonly pool: Promise<PythonProcess>[] = [];
  /** Why a fork server could not start here, once one could not (the pool then starts fresh sandboxes). */
  forkServerFailure: string | null = null;
  /** Fork servers out of the pool (fork-server-pool.ts). */
  private readonly returns = new ServerReturns({
    pool: this.pool,
    warm: () => this.warm,
    closed: () => this.closed,
    dispose: (proc) => this.dispose(proc),
    track: (work) => {
      this.disposing.add(work);
      void work.finally(() => this.disposing.delete(work));
    },
  });
  /** One per execution running: close() aborts them, so that they settle at once (POOL_CLOSED). */
  private readonly running = new Set<AbortController>();
  /** Used interpreters being killed (their cgroups ended): close() waits for them. */
  private readonly disposing = new Set<Promise<void>>();
  private readonly warm: number;
  private readonly workspaceBytes: number;
  private readonly defaults: Readonly<ExecutionLimits>;
  private closed = false;
  private filter: Buffer | undefined;
  private cgroups: CgroupManager | null = null;
  /** Installed by the guest runner before the program when the task may not start processes. */
  private execFilter: Buffer | undefined;
  /** Bound over the host-wide figures of each sandbox's /proc; removed at close. */
  private emptyFile: { path: string; remove: () => void } | null = null;
  /** matplotlib's font list (read from the cache or built once), and its copy the sandboxes bind. */
  private fontList: FontList | null = null;
  private stagedFonts: { path: string; name: string; remove: () => void } | null = null;
  private fontBuild: Promise<void> | null = null;

  constructor(private readonly options: PythonDriverOptions = {}) {
    this.warm = options.warm ?? DEFAULT_WARM_INTERPRETERS;
    this.workspaceBytes = options.workspaceBytes ?? DEFAULT_WORKSPACE_BYTES;
    this.defaults = resolveLimits(options.defaultLimits, PYTHON_DEFAULT_LIMITS);
    // A task's manifest records the engine when the task is claimed, before any execution: with a probe it is
    // the full name from the start (it read `cpython+bwrap` until the first execution, then changed, and a task
    // paused before that would have resumed as INCOMPATIBLE_CHECKPOINT).
    if (options.probe?.ok) this.probe = options.probe;
  }

  /**
   * `cpython-<version>+bwrap-<version>+numpy-<version>...` (pythonEngine: the image's packages too): from the start
   * with a probe (availableDrivers gives one), else once ready() probed.
   */
  get engine(): string {
    return this.probe?.ok ? pythonEngine(this.probe) : 'cpython+bwrap';
  }

  /** Rejects with SANDBOX_UNAVAILABLE (saying how to fix it) when bubblewrap or the interpreter cannot run. */
  async ready(): Promise<void> {
    const probe = await this.probed();
    if (!probe.ok) throw new CodecallError('SANDBOX_UNAVAILABLE', probe.reason);
    this.fill();
    await Promise.all(this.pool);
  }

  async execute(request: ExecutionRequest, options: ExecuteOptions = {}): Promise<ExecutionResult> {
    if (this.closed) throw new CodecallError('POOL_CLOSED', 'the python driver is closed');
    const probe = await this.probed();
    let limits: ExecutionLimits;
    try {
      limits = resolveLimits(request.limits, this.defaults);
    } catch (e) {
      // As the quickjs driver: a refused limit is the execution's failure, not a thrown error.
      return failedBeforeStart(
        failure(isCodecallError(e) ? e.code : 'INVALID_ARGUMENT', (e as Error).message),
      );
    }
    const steps = request.replay ? toWorkerSteps(request.replay) : undefined;
    if (typeof steps === 'string') return failedBeforeStart(failure('INVALID_ARGUMENT', steps));
    if (!probe.ok) return failedBeforeStart(failure('SANDBOX_UNAVAILABLE', probe.reason));
    if (request.language !== 'python') {
      return failedBeforeStart(
        failure('INVALID_ARGUMENT', `the python driver runs python, not ${request.language}`),
      );
    }
    const libraries = request.policy?.allowedLibraries ?? [];
    const pattern = libraries.find((entry) => !isLibraryPattern(entry));
    if (pattern !== undefined) {
      const message = `allowed_libraries: ${JSON.stringify(pattern)} is not a library pattern; use ${LIBRARY_PATTERN_HELP}`;
      return failedBeforeStart(failure('INVALID_LIBRARY_PATTERN', message));
    }
    const files = request.files ?? [];
    const bad = files.find((f) => !isWorkspaceName(f.name));
    if (bad) {
      const message = `input file name ${JSON.stringify(bad.name)} must be a relative path without . or .. parts`;
      return failedBeforeStart(failure('INVALID_ARGUMENT', message));
    }
    if (files.reduce((n, f) => n + f.data.byteLength, 0) > this.workspaceBytes / 2) {
      const message = `the input files take more than half of the ${this.workspaceBytes}-byte workspace`;
      return failedBeforeStart(failure('INVALID_ARGUMENT', message));
    }
    if (Buffer.byteLength(request.code) > limits.sourceBytes) {
      return failedBeforeStart(
        failure('SOURCE_TOO_LARGE', `the program is larger than ${limits.sourceBytes} bytes`),
      );
    }
    const proc = await (this.pool.shift() ?? this.returned(probe) ?? this.cold(probe));
    const serving = proc.forkServer;
    if (serving) this.returns.taken();
    // Alone, an execution has the pool refill once it is over, or soon if it runs on: a sandbox starting up beside
    // a short execution takes the CPU it needs (two cores: a warm print(1) went from ~3 ms to 9-18 ms). Beside
    // others, the pool refills at once, or the next ones find it empty.
    const refill = setTimeout(() => this.fill(), this.running.size > 0 ? 0 : REFILL_DELAY_MS);
    const controller = new AbortController();
    const signal = options.signal;
    const forward = () => controller.abort(signal?.reason);
    if (signal?.aborted) forward();
    else signal?.addEventListener('abort', forward, { once: true });
    if (this.closed) controller.abort(CLOSED);
    this.running.add(controller);
    try {
      this.execFilter ??= seccompFilter({ blocked: ['execve', 'execveat'] });
      return await runOnProcess(proc, request, limits, {
        signal: controller.signal,
        execFilter: this.execFilter,
      });
    } finally {
      this.running.delete(controller);
      clearTimeout(refill);
      // After the result is handed back: starting a process takes the event loop a few ms (fork).
      setImmediate(() => {
        this.fill();
        void this.buildFontList(probe);
      });
      signal?.removeEventListener('abort', forward);
      if (serving) this.returns.ended(proc);
      else this.dispose(proc);
    }
  }

  private dispose(proc: PythonProcess): void {
    const disposed = proc.dispose().catch(() => undefined);
    this.disposing.add(disposed);
    void disposed.finally(() => this.disposing.delete(disposed));
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const controller of this.running) controller.abort(CLOSED);
    this.returns.close();
    const pooled = this.pool.splice(0);
    const parked = this.parked;
    this.parked = null;
    await Promise.all([
      ...pooled.map(async (p) => (await p).dispose()),
      parked?.then((p) => p.dispose?.()).catch(() => undefined),
      // A workspace left behind is the program's files on the host's disk.
      ...this.disposing,
    ]);
    await this.fontBuild;
    this.emptyFile?.remove();
    this.emptyFile = null;
    this.stagedFonts?.remove();
    this.stagedFonts = null;
  }

  /**
   * The host file of matplotlib's font list that sandboxes get, once there is one: read from the cache, else
   * built now in a sandbox of its own (after an execution the driver builds it unasked). Null without
   * matplotlib, with `fontCacheDir: false`, or when the build failed.
   */
  async matplotlibFontList(): Promise<string | null> {
    const probe = await this.probed();
    if (!probe.ok) return null;
    await this.buildFontList(probe);
    const dir = this.fontDir(probe);
    return dir === null || this.fontList === null ? null : join(dir, this.fontList.name);
  }

  private fontDir(probe: Extract<PythonProbe, { ok: true }>): string | null {
    const root = this.options.fontCacheDir ?? defaultCacheDir();
    const version = probe.packages.matplotlib;
    return root === false || !version ? null : fontCacheDir(root, version, probe.python);
  }

  /** Builds the font list once, in a sandbox that takes nothing from the pool; a failure leaves none. */
  private buildFontList(probe: PythonProbe): Promise<void> {
    const dir = probe.ok ? this.fontDir(probe) : null;
    if (!probe.ok || dir === null || this.fontList !== null || this.closed) return Promise.resolve();
    this.fontBuild ??= (async () => {
      const proc = await PythonProcess.start(this.processOptions(probe, false));
      const controller = new AbortController();
      if (this.closed) controller.abort(CLOSED);
      this.running.add(controller);
      try {
        this.execFilter ??= seccompFilter({ blocked: ['execve', 'execveat'] });
        const r = await runOnProcess(
          proc,
          {
            code: FONT_CACHE_PROGRAM,
            language: 'python',
            tools: [],
            host: { call: () => Promise.resolve({ ok: true, value: null }) },
          },
          resolveLimits({ timeoutMs: 60_000, cpuMs: 60_000 }, this.defaults),
          { signal: controller.signal, execFilter: this.execFilter },
        );
        const made = r.status === 'succeeded' ? r.artifacts?.find((a) => isFontListName(a.name)) : undefined;
        if (!made) return;
        const list = { name: made.name, data: Buffer.from(made.data) };
        try {
          saveFontList(dir, list);
        } catch {
          // A cache this process cannot write: the list still serves it.
        }
        this.fontList = list;
        // The parked sandbox was spawned without the list: the next cold start gets one that has it.
        const parked = this.parked;
        this.parked = null;
        void parked?.then((p) => p.dispose?.()).catch(() => undefined);
        this.park();
      } finally {
        this.running.delete(controller);
        await proc.dispose().catch(() => undefined);
      }
    })().catch(() => undefined);
    return this.fontBuild;
  }

  private probed(): Promise<PythonProbe> {
    // Once: every execution asks, and a probe is a sandbox of its own (it used to start one per execution).
    this.probing ??= (async () => {
      const p =
        this.options.probe ??
        (await probePython({
          ...(this.options.bwrap ? { bwrap: this.options.bwrap } : {}),
          ...(this.options.python ? { python: this.options.python } : {}),
        }));
      if (p.ok) this.runnerCode = await compiledRunner(p.pythonPath);
      // Cgroups need root (or a delegated subtree); without them the rlimits alone bound the sandbox.
      if (p.ok && this.options.cgroups !== false && process.getuid?.() === 0) {
        const found = await detectCgroups().catch(() => ({ manager: null }));
        this.cgroups = found.manager;
      }
      const fonts = p.ok ? this.fontDir(p) : null;
      if (fonts !== null) this.fontList = readFontList(fonts);
      this.probe = p;
      this.park();
      return p;
    })();
    return this.probing;
  }

  private fill(): void {
    const probe = this.probe;
    if (!probe?.ok || this.closed) return;
    while (this.pool.length + this.returns.out < this.warm) {
      const options = this.processOptions(probe, true);
      // A kernel or policy that refuses the server its namespaces (AppArmor's userns rules, a /proc it may not
      // mount) must not stop Python tasks: the pool goes back to a fresh sandbox per execution.
      const started = PythonProcess.start(options).catch((e: unknown) => {
        if (!options.forkServer || this.closed) throw e;
        this.forkServerFailure ??= (e as Error).message;
        return PythonProcess.start(this.processOptions(probe, true));
      });
      started.catch(() => undefined);
      this.pool.push(started);
    }
  }

  /** A fork server on its way back (fork-server-pool.ts), else a cold start if none came. */
  private returned(probe: Extract<PythonProbe, { ok: true }>): Promise<PythonProcess> | undefined {
    return this.returns.take()?.then((proc) => {
      if (proc) return proc;
      if (this.closed) throw new CodecallError('POOL_CLOSED', 'the python driver is closed');
      return this.cold(probe);
    });
  }

  /** A sandbox for an execution the pool had none for: the parked one (already in its cgroup), else a new one. */
  private async cold(probe: Extract<PythonProbe, { ok: true }>): Promise<PythonProcess> {
    const parked = this.parked;
    this.parked = null;
    setImmediate(() => this.park());
    if (parked) {
      // A parked shell that died meanwhile (killed from outside) must not fail the execution.
      const proc = await parked.then((p) => p.launch()).catch(() => null);
      if (proc) return proc;
    }
    return PythonProcess.start(this.processOptions(probe, false));
  }

  /** Keeps one sandbox parked in its cgroup for the next cold start (joining one is the slow part on v1). */
  private park(): void {
    const probe = this.probe;
    if (!this.cgroups || !probe?.ok || this.closed || this.parked) return;
    const parked = PythonProcess.park(this.processOptions(probe, false));
    parked.catch(() => undefined);
    this.parked = parked;
  }

  private processOptions(probe: Extract<PythonProbe, { ok: true }>, prewarm: boolean): ProcessOptions {
    // Built once: the same filter for every sandbox (ptrace, mount, keyctl, bpf, perf_event_open, userfaultfd...).
    this.filter ??= seccompFilter();
    // Made again if a cleaner of the host's temporary directory took it: bwrap cannot start without it. A host
    // whose temporary directory refuses it runs sandboxes without the masks rather than none at all.
    if (!this.closed && (!this.emptyFile || !existsSync(this.emptyFile.path))) {
      this.emptyFile?.remove();
      try {
        this.emptyFile = makeEmptyFile();
      } catch {
        this.emptyFile = null;
      }
    }
    if (this.fontList && !this.closed && (!this.stagedFonts || !existsSync(this.stagedFonts.path))) {
      this.stagedFonts?.remove();
      try {
        this.stagedFonts = stageFontList(this.fontList);
      } catch {
        this.stagedFonts = null;
      }
    }
    return {
      bwrap: probe.bwrapPath,
      python: probe.pythonPath,
      safePathFlag: probe.safePathFlag,
      workspaceBytes: this.workspaceBytes,
      seccomp: this.filter,
      prewarm,
      // Pooled sandboxes only: a cold start stays the fresh sandbox it always was (a server's set-up costs more).
      ...(this.options.forkServer && prewarm && this.forkServerFailure === null
        ? { forkServer: { filter: this.filter } }
        : {}),
      ...(this.runnerCode ? { runnerCode: this.runnerCode } : {}),
      ...(this.emptyFile ? { emptyFile: this.emptyFile.path } : {}),
      ...(this.stagedFonts ? { fontList: { path: this.stagedFonts.path, name: this.stagedFonts.name } } : {}),
      ...(this.cgroups
        ? {
            cgroups: {
              manager: this.cgroups,
              // A backstop above the rlimits until an execution sets its own: the limit an execution with the
              // default memory limit gets (python-execution.ts), so that such an execution need not write it.
              limits: {
                memoryBytes: this.defaults.memoryBytes + CGROUP_ALLOWANCE_BYTES,
                pids: CGROUP_PIDS,
              },
            },
          }
        : {}),
    };
  }
}

export function createPythonDriver(options: PythonDriverOptions = {}): PythonDriver {
  return new PythonDriver(options);
}
