import { childrenOf, readProc } from './watchdog.ts';
import { constants } from 'node:os';

/** What the host holds back of a sandbox's pipes while it waits for a fence (ADR 0061): past it, no reuse. */
export const MAX_FENCED_BYTES = 4 * 1024 * 1024;

/** How long the host reads an ended execution's pipes before it takes the end (its last messages come first). */
const EXIT_GRACE_MS = 20;

/** How long a fork server may take to make the next execution's process before the host gives it up. */
export const RECYCLE_TIMEOUT_MS = 5_000;

/** A message of the fork server on its own fd (guest-fork-server.ts); the execution has no copy of that fd. */
export type ControlMessage =
  | { readonly t: 'ready'; readonly fence: string | null; readonly pid: number }
  | { readonly t: 'exit'; readonly code: number | null; readonly signal: number | null }
  | { readonly t: 'broken'; readonly message: string };

/** Splits the control fd's text into messages; anything else there is a broken server (null). */
export class ControlReader {
  private buffer = '';
  constructor(private readonly onMessage: (msg: ControlMessage | null) => void) {}

  feed(chunk: string): void {
    this.buffer += chunk;
    let nl: number;
    while ((nl = this.buffer.indexOf('\n')) >= 0) {
      const line = this.buffer.slice(0, nl);
      this.buffer = this.buffer.slice(nl + 1);
      let msg: unknown;
      try {
        msg = JSON.parse(line);
      } catch {
        msg = null;
      }
      this.onMessage(isControlMessage(msg) ? msg : null);
    }
    // Only the server writes this fd, and only short lines.
    if (this.buffer.length > 65_536) this.onMessage(null);
  }
}

function isControlMessage(msg: unknown): msg is ControlMessage {
  const t = (msg as { t?: unknown } | null)?.t;
  return t === 'ready' || t === 'exit' || t === 'broken';
}

/**
 * One of a reused sandbox's pipes (its protocol fd, stdout, stderr) between two executions: everything the last
 * execution wrote is dropped, up to the server's fence (a random line no execution saw), which may arrive before
 * or after the host learns it from the control fd.
 */
export class FencedStream {
  private held = '';
  private marker: string | null = null;
  /** What came after the fence, once it passed. */
  passed: string | null = null;

  constructor(private readonly line: (fence: string) => string) {}

  /** Holds text until the fence; false when too much came before it. */
  feed(text: string): boolean {
    if (this.passed !== null) {
      this.passed += text;
      return true;
    }
    this.held += text;
    if (this.held.length > MAX_FENCED_BYTES) return false;
    this.check();
    return true;
  }

  expect(fence: string): void {
    this.marker = this.line(fence);
    this.check();
  }

  private check(): void {
    if (this.marker === null) return;
    const at = this.held.indexOf(this.marker);
    if (at < 0) {
      // Only its tail can still start the marker.
      this.held = this.held.slice(-this.marker.length);
      return;
    }
    this.passed = this.held.slice(at + this.marker.length);
    this.held = '';
  }
}

export const PROTOCOL_FENCE = (fence: string) => `\n{"t":"fence","fence":"${fence}"}\n`;
export const RAW_FENCE = (fence: string) => `\n${fence}\n`;

/** A signal's name (exitFailure reads names) from its number, as the server reports it. */
export function signalName(signal: number | null): NodeJS.Signals | null {
  if (signal === null) return null;
  const entry = Object.entries(constants.signals).find(([, n]) => n === signal);
  return (entry?.[0] as NodeJS.Signals | undefined) ?? null;
}

/**
 * The host pid of the process a fork server knows as `nsPid` (in the server's pid namespace): below bwrap's
 * `rootPid` (bwrap, the server, the helper, the execution's process), found by the NSpid line of each.
 */
export function hostPidOf(rootPid: number, nsPid: number): number | undefined {
  const stack = [rootPid];
  for (let seen = 0; stack.length > 0 && seen < 16; seen++) {
    const pid = stack.pop() as number;
    const status = readProc(`/proc/${pid}/status`);
    const ns = /^NSpid:\s+(.*)$/m
      .exec(status ?? '')?.[1]
      ?.trim()
      .split(/\s+/);
    if (pid !== rootPid && ns && Number(ns[1]) === nsPid && ns.length === 3) return pid;
    stack.push(...childrenOf(pid));
  }
  return undefined;
}

/** The pipes of a reused sandbox between two executions, each held up to the server's fence. */
export interface Fences {
  readonly protocol: FencedStream;
  readonly stdout: FencedStream;
  readonly stderr: FencedStream;
}

/** What a ForkServerLink needs of its sandbox's process. */
export interface ServedSandbox {
  /** bwrap's host pid. */
  readonly pid: number | undefined;
  readonly exited: Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>;
  kill(): void;
  /** What the server said when it could not make an execution's process (startup errors). */
  broken(message: string): void;
  /** Writes one order on the server's control fd. */
  order(line: string): void;
}

type Exit = { readonly code: number | null; readonly signal: NodeJS.Signals | null };

/**
 * The host's side of a fork server (guest-fork-server.ts): its control messages, the execution's process, how it
 * ended, and the change from one execution to the next (the order to end it, the wait for the next one's process
 * and for the fences on every pipe).
 */
export class ForkServerLink {
  /** The current execution's process (pid 1 of its namespaces), as the host's pid. */
  programPid: number | undefined;
  /** Set between two executions: the pipes' text goes here until the fences. */
  fences: Fences | null = null;
  private handler: ((msg: ControlMessage | null) => void) | null = null;
  private endExecution: (exit: Exit) => void = () => undefined;
  /** How the current execution's process ended: its own end (the helper's report) or the sandbox's. */
  ended: Promise<Exit>;

  constructor(private readonly sandbox: ServedSandbox) {
    this.ended = this.nextEnd();
  }

  onControl(msg: ControlMessage | null): void {
    if (this.handler) return this.handler(msg);
    if (msg === null) return this.sandbox.kill();
    // The execution's process ended on its own (a crash, os._exit): as a sandbox's exit is today. A moment later:
    // this fd is not its protocol fd, and what it wrote last there must be read first (a sandbox's 'close' waits).
    if (msg.t === 'exit') {
      const exit = { code: msg.code, signal: signalName(msg.signal) };
      setTimeout(() => this.endExecution(exit), EXIT_GRACE_MS);
    }
  }

  /** Waits for the server's word that the next execution's process is ready (false: the sandbox is killed). */
  awaitProgram(): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => done(false), RECYCLE_TIMEOUT_MS);
      const done = (ok: boolean) => {
        clearTimeout(timer);
        this.handler = null;
        if (!ok) this.sandbox.kill();
        resolve(ok);
      };
      this.handler = (msg) => {
        if (msg === null) return done(false);
        if (msg.t === 'broken') {
          this.sandbox.broken(msg.message);
          return done(false);
        }
        if (msg.t !== 'ready') return; // the last execution's end, reported by its helper
        const root = this.sandbox.pid;
        const pid = root === undefined ? undefined : hostPidOf(root, msg.pid);
        if (pid === undefined) return done(false);
        this.programPid = pid;
        if (msg.fence !== null && this.fences) {
          for (const stream of Object.values(this.fences) as FencedStream[]) stream.expect(msg.fence);
        }
        done(true);
      };
      void this.sandbox.exited.then(() => done(false));
    });
  }

  /**
   * Orders the server to end the execution's process and make the next; resolves with what followed the fence on
   * the protocol fd ('' for nothing), or null when the sandbox could not be reused (it is killed then).
   */
  async next(alive: () => boolean): Promise<string | null> {
    this.programPid = undefined;
    const fences: Fences = {
      protocol: new FencedStream(PROTOCOL_FENCE),
      stdout: new FencedStream(RAW_FENCE),
      stderr: new FencedStream(RAW_FENCE),
    };
    this.fences = fences;
    const waiting = this.awaitProgram();
    this.sandbox.order('{"t":"end"}\n');
    if (!(await waiting)) return null;
    // The fences follow the last execution's output in each pipe; they arrive soon after the server's word.
    const deadline = Date.now() + RECYCLE_TIMEOUT_MS;
    while (
      fences.protocol.passed === null ||
      fences.stdout.passed === null ||
      fences.stderr.passed === null
    ) {
      if (!alive()) return null;
      if (Date.now() > deadline) {
        this.sandbox.kill();
        return null;
      }
      await new Promise((r) => setTimeout(r, 1));
    }
    this.fences = null;
    this.ended = this.nextEnd();
    return fences.protocol.passed;
  }

  private nextEnd(): Promise<Exit> {
    const ended = new Promise<Exit>((resolve) => (this.endExecution = resolve));
    return Promise.race([ended, this.sandbox.exited]);
  }
}
