import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { CodecallError } from '../../errors/index.ts';
import { existsSync } from 'node:fs';
import { bwrapArgs, SEEDED_FILES, SHM_BYTES, TMP_BYTES } from './bwrap-args.ts';
import { CONTROL_IN_FD, CONTROL_OUT_FD } from './guest-fork-server.ts';
import { ControlReader, ForkServerLink } from './fork-server.ts';
import { maskedProcFiles } from './proc-masks.ts';
import { RUNNER_FD } from './runner-code.ts';
import type { Cgroup, CgroupLimits, CgroupManager } from './cgroups.ts';

/** The uid and gid a sandbox runs as when codecall runs as root: bwrap started as root maps the guest to root. */
export const SANDBOX_UID = 65534;

/** Longest protocol line accepted from a guest (a tool call's arguments or the result, with room). */
export const MAX_LINE_BYTES = 64 * 1024 * 1024;

export interface ProcessOptions {
  readonly bwrap: string;
  readonly python: string;
  readonly safePathFlag: boolean;
  /** Size of the sandbox's workspace tmpfs. */
  readonly workspaceBytes: number;
  /** A seccomp BPF program given to bwrap on an extra fd, when the driver has one. */
  readonly seccomp?: Buffer;
  /** Where the sandbox's processes are counted, capped and ended, when this machine has usable cgroups. */
  readonly cgroups?: { readonly manager: CgroupManager; readonly limits: CgroupLimits };
  /** For the warm pool: the guest imports what programs often need while it waits (a cold start does not). */
  readonly prewarm?: boolean;
  /** The runner compiled by this interpreter (runner-code.ts); without it the sandbox compiles the source. */
  readonly runnerCode?: Buffer;
  /** An empty file bound over the host-wide figures of /proc (proc-masks.ts). */
  readonly emptyFile?: string;
  /** matplotlib's font list, bound read-only into /tmp (font-cache.ts). */
  readonly fontList?: { readonly path: string; readonly name: string };
  /**
   * Run the interpreter as a fork server (ADR 0061, guest-fork-server.ts): each execution gets a process of its
   * own with namespaces and mounts of its own, and the sandbox serves the next one. `filter` is the seccomp
   * filter each execution's process installs (bwrap's `seccomp` is not used then).
   */
  readonly forkServer?: { readonly filter: Buffer };
}

let groups = 0;

const SETARCH = '/usr/bin/setarch';
const NO_ASLR = existsSync(SETARCH);

/** A sandbox spawned ahead, waiting to be launched (PythonProcess.park). */
export interface ParkedProcess {
  /** Starts the sandbox; resolves once its guest is up (SANDBOX_UNAVAILABLE when it cannot start). */
  launch(): Promise<PythonProcess>;
  /** Ends it unlaunched (its cgroup too). */
  dispose?(): Promise<void>;
}

export interface ExitInfo {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/**
 * One sandboxed interpreter, started ahead of use: it waits for its start message. Messages from the guest
 * arrive line by line (fd 3); its raw stdout/stderr (C extensions writing to fd 1/2) arrive as text.
 */
export class PythonProcess {
  /** The start of a line not yet ended, in the chunks it arrived in. */
  private pending: string[] = [];
  private pendingLength = 0;
  private lineHandler: ((msg: unknown) => void) | null = null;
  private rawHandler: ((level: 'log' | 'error', text: string) => void) | null = null;
  private readonly queued: unknown[] = [];
  private protocolError: string | null = null;
  readonly exited: Promise<ExitInfo>;
  private killed = false;
  private readyHandler: (() => void) | null = null;
  /** What bwrap or the interpreter printed before the guest was up. */
  private startupErrors = '';
  /** The cgroup's memory limit as last written: an execution with the same limit writes nothing (ADR 0061). */
  private memoryLimit: number | undefined;
  /** A fork server's link (fork-server.ts): its control fd, the execution's process, the change to the next. */
  private link: ForkServerLink | null = null;
  /** Executions this sandbox ran (a fork server's). */
  executions = 0;

  private constructor(
    private readonly child: ChildProcess,
    private cgroup: Cgroup | null = null,
  ) {
    this.exited = new Promise((resolve) => {
      // 'close', not 'exit': every message written before the end has been read by then.
      child.once('close', (code, signal) => resolve({ code, signal }));
      child.once('error', () => resolve({ code: null, signal: null }));
    });
    const messages = child.stdio[3] as Readable;
    messages.setEncoding('utf8');
    messages.on('data', (chunk: string) => {
      const fences = this.link?.fences;
      if (!fences) return this.onData(chunk);
      if (!fences.protocol.feed(chunk)) this.kill();
    });
    for (const [stream, level] of [
      [child.stdout, 'log'],
      [child.stderr, 'error'],
    ] as const) {
      stream?.setEncoding('utf8');
      stream?.on('data', (text: string) => {
        if (this.readyHandler) this.startupErrors += text;
        const fences = this.link?.fences;
        if (fences) {
          if (!(level === 'log' ? fences.stdout : fences.stderr).feed(text)) this.kill();
          return;
        }
        this.rawHandler?.(level, text);
      });
    }
    const control = (child.stdio as readonly unknown[])[CONTROL_OUT_FD] as Readable | undefined;
    if (control) {
      const link = new ForkServerLink({
        pid: child.pid,
        exited: this.exited,
        kill: () => this.kill(),
        broken: (message) => (this.startupErrors += message),
        order: (line) => ((child.stdio as readonly unknown[])[CONTROL_IN_FD] as Writable).write(line),
      });
      this.link = link;
      const reader = new ControlReader((msg) => link.onControl(msg));
      control.setEncoding('utf8');
      control.on('data', (chunk: string) => reader.feed(chunk));
    }
    // A guest that closes its pipes early (or a parked shell killed with the seccomp filter and the runner still
    // unread) must not crash the host with EPIPE or ECONNRESET: its exit says what happened.
    for (const stream of child.stdio) stream?.on('error', () => undefined);
  }

  static async start(options: ProcessOptions): Promise<PythonProcess> {
    return (await PythonProcess.park(options)).launch();
  }

  /**
   * Spawns a sandbox up to the point where it joins its cgroup, and parks it there: a shell waiting for its go.
   * Joining is the slow part of a start on cgroup v1 (each move waits for an RCU grace period, 10-15 ms), so a
   * driver keeps one parked for its next cold start. Without cgroups there is nothing to do ahead: bwrap is
   * spawned at launch.
   */
  static async park(options: ProcessOptions): Promise<ParkedProcess> {
    if (!options.cgroups) return { launch: () => PythonProcess.spawnSandbox(options, false) };
    const proc = PythonProcess.spawnSandbox(options, true);
    const cgroup = await options.cgroups.manager
      .create(`py-${process.pid}-${++groups}`, options.cgroups.limits)
      .catch(() => null);
    const parked = await proc;
    try {
      if (!cgroup) throw new Error('no cgroup');
      if (parked.child.pid === undefined) throw new Error('the sandbox did not start');
      await cgroup.add(parked.child.pid);
      parked.cgroup = cgroup;
      parked.memoryLimit = options.cgroups.limits.memoryBytes;
    } catch {
      // Nothing of the sandbox runs yet (the shell waits): it goes on without the group.
      await cgroup?.destroy().catch(() => undefined);
    }
    return {
      launch: () => parked.go(options.prewarm === true),
      dispose: () => parked.dispose(),
    };
  }

  /** The sandbox's process: with `parked`, a shell that waits for a line on stdin before it becomes bwrap. */
  private static async spawnSandbox(options: ProcessOptions, parked: boolean): Promise<PythonProcess> {
    const root = process.getuid?.() === 0;
    const seccompFd = options.seccomp && !options.forkServer ? 5 : undefined;
    const args = bwrapArgs({
      python: options.python,
      workspaceBytes: options.workspaceBytes,
      safePathFlag: options.safePathFlag,
      ...(seccompFd === undefined ? {} : { seccompFd }),
      ...(options.runnerCode ? { compiledRunner: true } : {}),
      ...(options.emptyFile ? { emptyFile: options.emptyFile } : {}),
      ...(options.fontList ? { fontList: options.fontList } : {}),
      ...(options.forkServer ? { forkServer: true } : {}),
      seededFilesFd: RUNNER_FD + 1,
    });
    // A parked shell waits for a line on stdin before it becomes bwrap: the process is in its group before
    // anything of the sandbox starts, so every process it makes is counted and ended with it. A cgroup that
    // cannot be made leaves the sandbox to its rlimits and the watchdog: a machine whose hierarchy refuses one
    // group must not stop Python tasks altogether.
    // setarch -R: no address space randomisation (inherited through bwrap's exec of the interpreter), so the
    // addresses the program sees (id(), the default hash() of objects, the order of a set of objects) repeat.
    const launcher = NO_ASLR ? [SETARCH, '-R', options.bwrap] : [options.bwrap];
    const command = parked ? '/bin/sh' : (launcher[0] as string);
    // env -i: the shell would hand bwrap its PWD, and bwrap its environment to what it starts.
    const argv = parked
      ? ['-c', 'read _ && exec /usr/bin/env -i "$0" "$@"', ...launcher, ...args]
      : [...launcher.slice(1), ...args];
    const child = spawn(command, argv, {
      stdio: [
        parked ? 'pipe' : 'ignore',
        'pipe',
        'pipe',
        'pipe',
        'pipe',
        seccompFd === undefined ? 'ignore' : 'pipe',
        options.runnerCode ? 'pipe' : 'ignore',
        // Empty pipes: bwrap copies each into an empty file of the sandbox's (bwrap-args.ts, SEEDED_FILES).
        ...SEEDED_FILES.map(() => 'pipe' as const),
        // A fork server's own fds (orders in, answers out), which no execution's process has.
        ...(options.forkServer ? (['pipe', 'pipe'] as const) : []),
      ],
      ...(root ? { uid: SANDBOX_UID, gid: SANDBOX_UID } : {}),
      // bwrap's init used to be the sandbox's pid 1, with the environment bwrap was started with, readable at
      // /proc/1/environ: the host's environment (API keys) until bwrap got none of it (--clearenv only clears
      // the program's). Found by the escape suite, "the host's environment". pid 1 is the interpreter now
      // (--as-pid-1); bwrap still gets nothing it does not need.
      env: {},
    });
    const stdio = child.stdio as readonly unknown[];
    if (seccompFd !== undefined && options.seccomp) (stdio[5] as Writable).end(options.seccomp);
    if (options.runnerCode) (stdio[RUNNER_FD] as Writable).end(options.runnerCode);
    SEEDED_FILES.forEach((_, i) => (stdio[RUNNER_FD + 1 + i] as Writable).end());
    const proc = new PythonProcess(child, null);
    proc.serving = options.forkServer
      ? {
          t: 'serve',
          filter: options.forkServer.filter.toString('base64'),
          layout: {
            tmp: TMP_BYTES,
            shm: SHM_BYTES,
            workspace: options.workspaceBytes,
            masks: options.emptyFile ? maskedProcFiles() : [],
            seeded: SEEDED_FILES,
            font: options.fontList?.name ?? null,
          },
        }
      : null;
    return parked ? proc : proc.go(options.prewarm === true);
  }

  /** A fork server's first order (guest-fork-server.ts), sent once its interpreter is up. */
  private serving: object | null = null;

  /** Lets a parked shell become the sandbox (or waits for a spawned one) until the guest says it is up. */
  private async go(prewarm: boolean): Promise<PythonProcess> {
    if (prewarm && !this.serving) this.send({ t: 'prewarm' });
    this.child.stdin?.end('\n');
    // Handed out only once the guest says it is up: bwrap killed while it sets up a sandbox may leave its child
    // running (outside the host's reach but for our pipes).
    const ready = await new Promise<boolean>((resolve) => {
      this.readyHandler = () => resolve(true);
      void this.exited.then(() => resolve(false));
    });
    const served = ready && this.serving ? await this.serve(this.serving) : ready;
    if (!served) {
      const stderr = this.startupErrors.trim();
      await this.cgroup?.destroy().catch(() => undefined);
      throw new CodecallError(
        'SANDBOX_UNAVAILABLE',
        `the python sandbox did not start${stderr ? `: ${stderr.slice(0, 500)}` : ''}`,
      );
    }
    return this;
  }

  /** Makes the interpreter a fork server; resolves once its first execution's process is ready. */
  private serve(order: object): Promise<boolean> {
    this.send(order);
    return this.link ? this.link.awaitProgram() : Promise.resolve(false);
  }

  /** How the current execution's process ended: the sandbox's exit, or (a fork server) its own. */
  get executionEnded(): Promise<ExitInfo> {
    return this.link?.ended ?? this.exited;
  }

  /** The process whose tree is the execution's (host pid), and whether that process is the program's own. */
  get programRoot(): { readonly pid: number | undefined; readonly own: boolean } {
    const own = this.link?.programPid;
    return own !== undefined ? { pid: own, own: true } : { pid: this.child.pid, own: false };
  }

  /** Whether the sandbox is a fork server (it may serve another execution after this one). */
  get forkServer(): boolean {
    return this.serving !== null;
  }

  /** A fork server whose last execution ended with its result (nothing killed, nothing unsent). */
  get reusable(): boolean {
    return this.serving !== null && this.alive && this.protocolError === null && this.unsentBytes === 0;
  }

  /**
   * Has a fork server end the execution's process (every process of its namespaces) and make the next one; the
   * pipes' contents up to the server's fences are dropped. False (and the sandbox killed) when it cannot.
   */
  async recycle(): Promise<boolean> {
    if (!this.reusable || !this.link) return false;
    // The cgroup's OOM count is the sandbox's, not the execution's: after a kill, the next crash would read as one.
    if (await this.oomKilled()) return false;
    this.lineHandler = null;
    this.rawHandler = null;
    this.queued.length = 0;
    this.pending = [];
    this.pendingLength = 0;
    const after = await this.link.next(() => this.alive);
    if (after === null || !this.alive) return false;
    this.executions += 1;
    if (after) this.onData(after);
    return !this.killed;
  }

  /** Receives the guest's messages (those that arrived before are delivered first). */
  onMessage(handler: (msg: unknown) => void): void {
    this.lineHandler = handler;
    for (const msg of this.queued.splice(0)) handler(msg);
  }

  onRawOutput(handler: (level: 'log' | 'error', text: string) => void): void {
    this.rawHandler = handler;
  }

  /** Why the guest's messages could not be read (a line too long, not JSON), once that happened. */
  get brokenProtocol(): string | null {
    return this.protocolError;
  }

  send(msg: unknown): void {
    const pipe = this.child.stdio[4] as Writable;
    if (!pipe.destroyed) pipe.write(`${JSON.stringify(msg)}\n`);
  }

  /** The host pid of bwrap: every process of the sandbox descends from it. */
  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Bytes sent to the guest that it has not read yet (beyond what the pipe holds). */
  get unsentBytes(): number {
    return (this.child.stdio[4] as Writable).writableLength;
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null && !this.killed;
  }

  /** Ends the sandbox: bwrap's death takes the whole pid namespace with it (--die-with-parent, pid 1 gone). */
  kill(): void {
    this.killed = true;
    this.child.kill('SIGKILL');
    // Closing our ends also ends anything of the sandbox that might outlive bwrap (it exits on EOF).
    for (const stream of this.child.stdio) stream?.destroy();
  }

  /** Sets the sandbox's cgroup memory limit, when it has a cgroup (false when not). */
  async limitMemory(bytes: number): Promise<boolean> {
    if (!this.cgroup) return false;
    if (this.memoryLimit === bytes) return true;
    this.memoryLimit = undefined;
    await this.cgroup.setMemory(bytes);
    this.memoryLimit = bytes;
    return true;
  }

  /** Whether the kernel's OOM killer ended something of the sandbox (its cgroup's memory limit). */
  async oomKilled(): Promise<boolean> {
    return this.cgroup ? this.cgroup.oomKilled().catch(() => false) : false;
  }

  /** Kills it (if still running); its workspace goes with it, and its cgroup ends whatever else is left. */
  async dispose(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.kill();
    await this.exited;
    await this.cgroup?.destroy().catch(() => undefined);
  }

  private onData(chunk: string): void {
    if (this.protocolError) return;
    // Only the new chunk is searched for the end of a line: searching the whole pending text at every chunk
    // was quadratic, and a line with no end (64 KiB chunks towards MAX_LINE_BYTES) held the host's event loop
    // for tens of seconds. Found by the escape suite ("an endless line on the protocol fd").
    let start = 0;
    let nl: number;
    while ((nl = chunk.indexOf('\n', start)) >= 0) {
      const tail = chunk.slice(start, nl);
      const line = this.pending.length > 0 ? this.pending.join('') + tail : tail;
      this.pending = [];
      this.pendingLength = 0;
      start = nl + 1;
      let msg: unknown;
      try {
        msg = JSON.parse(line);
      } catch {
        return this.fail('the sandbox sent a message that is not JSON');
      }
      if (this.readyHandler && (msg as { t?: unknown }).t === 'ready') {
        const ready = this.readyHandler;
        this.readyHandler = null;
        ready();
      } else if (this.lineHandler) this.lineHandler(msg);
      else this.queued.push(msg);
      if (this.protocolError) return;
    }
    if (start < chunk.length) {
      this.pending.push(chunk.slice(start));
      this.pendingLength += chunk.length - start;
    }
    if (this.pendingLength > MAX_LINE_BYTES) this.fail('the sandbox sent a message over the size limit');
  }

  private fail(reason: string): void {
    this.protocolError = reason;
    this.kill();
  }
}
