import { constants, readdirSync, readFileSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { open, readdir, readFile, readlink, stat, statfs } from 'node:fs/promises';
import { join } from 'node:path';
import { SEEDED_FILES } from './bwrap-args.ts';

/**
 * What the host watches of a running sandbox that no rlimit bounds, until cgroups do (memory.max charges all of
 * it to one budget). Found by the escape suite (test/conformance/escape-python.ts):
 *
 * - memory of several processes: RLIMIT_AS is per process, so 32 forks (RLIMIT_NPROC) each held up to the whole
 *   limit ("fork, then allocate in every child");
 * - memfd_create(2) files: their pages are in no address space until mapped, so RLIMIT_AS never sees them
 *   ("memory in memfds");
 * - the sandbox's tmpfs mounts: their sizes bound the bytes, not the inodes (host memory: "many files in the
 *   workspace"). Counted with statfs(2) on the mounts, not by walking them: a walk by path followed a link the
 *   program swapped in for a directory out to the host's files (a per-execution oracle on host paths, issue 15).
 *   statfs reads no name the program made; deleted files held open are in its figures too;
 * - CPU time: RLIMIT_CPU is per process, so forks each get the whole budget.
 *
 * The host polls: every WATCH_INTERVAL_MS one scan of /proc serves every watched sandbox. A program can overshoot
 * by what it allocates or writes in one interval; it cannot keep going.
 */
export const WATCH_INTERVAL_MS = 100;

export interface WatchLimits {
  /** Anonymous and shared memory of all the sandbox's processes, plus its open memfds. */
  readonly memoryBytes: number;
  /** Bytes in use on the sandbox's tmpfs mounts (workspace, /tmp, /dev/shm), deleted files held open included. */
  readonly workspaceBytes: number;
  /** Inodes in use on them: files, directories, links. */
  readonly workspaceEntries: number;
  /** CPU time of all the sandbox's processes (those it reaped included) past `cpuBaselineMs`. */
  readonly cpuMs: number;
  /** What the sandbox had used when the program started (sandboxUsage). */
  readonly cpuBaselineMs: number;
}

export interface Breach {
  readonly code: 'MEMORY_LIMIT' | 'FILE_LIMIT' | 'CPU_LIMIT';
  readonly message: string;
}

interface Watch {
  readonly rootPid: number;
  /** The root is the program's pid 1 itself (a fork server's execution), not bwrap. */
  readonly ownRoot: boolean;
  /** The root's parent as the watch began (ownRoot): the check that a pid was not reused. */
  readonly rootParent: number;
  /** The sandbox's tmpfs mounts, held open once found (opening them again could reach another process's). */
  mounts: FileHandle[] | null;
  /** The seeded files (SEEDED_FILES), held open with the mounts. */
  seeded: FileHandle[] | null;
  opening: boolean;
  readonly limits: WatchLimits;
  readonly onBreach: (breach: Breach) => void;
  walking: boolean;
  done: boolean;
}

/** The sandbox's writable mounts, as its root has them. */
const TMPFS_MOUNTS = ['workspace', 'tmp', 'dev/shm'];

const watches = new Set<Watch>();
let timer: NodeJS.Timeout | null = null;
let scanning = false;

/**
 * Watches the processes under `rootPid` (bwrap, started by the host) and the workspace until the returned stop
 * function is called; calls `onBreach` once, at the first limit passed.
 */
export function watchSandbox(
  rootPid: number,
  limits: WatchLimits,
  onBreach: (breach: Breach) => void,
  options: { readonly ownRoot?: boolean } = {},
): () => void {
  const watch: Watch = {
    rootPid,
    ownRoot: options.ownRoot === true,
    rootParent: parentOf(readProc(`/proc/${rootPid}/stat`) ?? ''),
    mounts: null,
    seeded: null,
    opening: false,
    limits,
    walking: false,
    done: false,
    onBreach: (breach) => {
      if (watch.done) return;
      stop();
      onBreach(breach);
    },
  };
  const stop = () => {
    watch.done = true;
    for (const handle of [...(watch.mounts ?? []), ...(watch.seeded ?? [])])
      void handle.close().catch(() => undefined);
    watch.mounts = null;
    watch.seeded = null;
    watches.delete(watch);
    if (watches.size === 0 && timer) {
      clearInterval(timer);
      timer = null;
    }
  };
  watches.add(watch);
  if (!timer) {
    timer = setInterval(tick, WATCH_INTERVAL_MS);
    timer.unref();
  }
  return stop;
}

function tick(): void {
  if (!scanning) {
    scanning = true;
    void scanProcesses().finally(() => (scanning = false));
  }
  for (const watch of watches) {
    if (watch.walking) continue;
    watch.walking = true;
    void measureMounts(watch).finally(() => (watch.walking = false));
  }
}

async function scanProcesses(): Promise<void> {
  await Promise.all(
    [...watches].map(async (watch) => {
      // Each sandbox's own tree, from its root down (a few reads): a scan of every process of the host cost each
      // tick one read per host process, most of the host's CPU per execution on a busy machine (ADR 0061).
      const { pids, cpuMs, children } = processTree(watch.rootPid);
      if (pids.length === 0) return;
      const used = cpuMs - watch.limits.cpuBaselineMs;
      if (used > watch.limits.cpuMs) {
        return watch.onBreach({
          code: 'CPU_LIMIT',
          message: `the program's processes computed for more than ${watch.limits.cpuMs} ms of CPU time`,
        });
      }
      // bwrap's one child is the sandbox's pid 1 (the interpreter): its root is where the tmpfs mounts are. A fork
      // server's execution is its own pid 1, with mounts of its own.
      const init = watch.ownRoot ? [watch.rootPid] : children;
      if (!watch.mounts && !watch.opening && init?.length === 1) void openMounts(watch, init[0] as number);
      const held = new Map<string, { bytes: number }>();
      const resident = await Promise.all(
        pids.map(async (pid) => {
          await heldFiles(pid, held);
          return residentBytes(pid);
        }),
      );
      let memory = resident.reduce((a, b) => a + b, 0);
      for (const file of held.values()) memory += file.bytes;
      if (memory > watch.limits.memoryBytes) {
        watch.onBreach({
          code: 'MEMORY_LIMIT',
          message: `the program's processes held more than ${watch.limits.memoryBytes} bytes of memory`,
        });
      }
    }),
  );
}

/** Kernel clock ticks per second in /proc/<pid>/stat (USER_HZ: 100 on every Linux ABI Node runs on). */
const TICKS_PER_SECOND = 100;

/** What a sandbox has used, read off the kernel (sandboxUsage): as its program starts, and as it ends. */
export interface SandboxUsage {
  /** CPU time of its processes, their reaped children's included. */
  readonly cpuMs: number;
  /**
   * The largest peak resident set (VmHWM) of its processes, bwrap's own excepted: the sandbox's peak memory as the
   * host reads it, never as the guest reports it. A child that already ended is not counted (its parent's is).
   */
  readonly peakBytes: number;
}

/**
 * The figures of the sandbox under `rootPid`, read synchronously: a handful of /proc reads (the tree is a few
 * processes, at most the pids limit), each a few microseconds, where a round trip through libuv's thread pool
 * per read cost the end of every execution about a millisecond.
 */
export function sandboxUsage(rootPid: number, options: { readonly ownRoot?: boolean } = {}): SandboxUsage {
  let cpuMs = 0;
  let peakBytes = 0;
  const stack = [rootPid];
  const seen = new Set<number>();
  while (stack.length > 0 && seen.size < MAX_USAGE_PROCESSES) {
    const pid = stack.pop() as number;
    if (seen.has(pid)) continue;
    seen.add(pid);
    const stat = readProc(`/proc/${pid}/stat`);
    if (stat === null) continue;
    cpuMs += statCpuMs(stat);
    if (pid !== rootPid || options.ownRoot === true) {
      const hwm = /^VmHWM:\s+(\d+) kB$/m.exec(readProc(`/proc/${pid}/status`) ?? '')?.[1];
      if (hwm !== undefined) peakBytes = Math.max(peakBytes, Number(hwm) * 1024);
    }
    for (const child of childrenOf(pid)) stack.push(child);
  }
  return { cpuMs, peakBytes };
}

/**
 * The children of `pid`, through /proc/<pid>/task/<tid>/children where the kernel has those files
 * (CONFIG_PROC_CHILDREN); else by the parent field of every process's stat (a scan of all of /proc).
 */
export function childrenOf(pid: number): number[] {
  let tasks: string[] = [];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return []; // Gone meanwhile.
  }
  const out: number[] = [];
  for (const tid of tasks) {
    const list = readProc(`/proc/${pid}/task/${tid}/children`);
    if (list === null) return scanChildren(pid);
    for (const child of list.split(' ')) if (child) out.push(Number(child));
  }
  return out;
}

function scanChildren(parent: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = readProc(`/proc/${name}/stat`);
    if (stat !== null && Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === parent)
      out.push(Number(name));
  }
  return out;
}

/** More than a sandbox may hold (its pids limit), so that a walk of a reused pid's tree stays short. */
const MAX_USAGE_PROCESSES = 256;

/** A /proc file's text, or null when it is gone (the process ended) or unreadable. */
export function readProc(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

/** The parent pid of one /proc/<pid>/stat line (NaN for none). */
function parentOf(line: string): number {
  return Number(line.slice(line.lastIndexOf(')') + 2).split(' ')[1]);
}

/** utime + stime + cutime + cstime of one /proc/<pid>/stat line, in ms. */
function statCpuMs(text: string): number {
  // "pid (comm) state ppid ... utime stime cutime cstime ...": comm may hold spaces and parentheses.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return (fields.slice(11, 15).reduce((sum, f) => sum + (Number(f) || 0), 0) * 1000) / TICKS_PER_SECOND;
}

/**
 * The processes under `rootPid` (itself included, while it lives), the CPU time they used (their waited-for
 * children's included), and the root's own children. Read synchronously, as sandboxUsage reads it.
 */
function processTree(rootPid: number): { pids: number[]; cpuMs: number; children: number[] } {
  const pids: number[] = [];
  let cpuMs = 0;
  let rootChildren: number[] = [];
  const stack = [rootPid];
  const seen = new Set<number>();
  while (stack.length > 0 && seen.size < MAX_USAGE_PROCESSES) {
    const pid = stack.pop() as number;
    if (seen.has(pid)) continue;
    seen.add(pid);
    const stat = readProc(`/proc/${pid}/stat`);
    if (stat === null) continue;
    pids.push(pid);
    cpuMs += statCpuMs(stat);
    const children = childrenOf(pid);
    if (pid === rootPid) rootChildren = children;
    for (const child of children) stack.push(child);
  }
  return { pids, cpuMs, children: rootChildren };
}

/** Private (anonymous) and shared-memory pages in RAM; file pages are the page cache's, and shared. */
async function residentBytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  let kib = 0;
  for (const line of status.split('\n')) {
    const m = /^(RssAnon|RssShmem):\s+(\d+) kB/.exec(line);
    if (m) kib += Number(m[2]);
  }
  return kib * 1024;
}

/** memfds `pid` holds open, by inode (one file open many times counts once). */
async function heldFiles(pid: number, held: Map<string, { bytes: number }>): Promise<void> {
  const dir = `/proc/${pid}/fd`;
  const fds = await readdir(dir).catch(() => [] as string[]);
  await Promise.all(
    fds.map(async (fd) => {
      const target = await readlink(join(dir, fd)).catch(() => '');
      if (!target.startsWith('/memfd:')) return;
      // Through the fd's own link: the open file itself, whatever its name.
      const info = await stat(join(dir, fd)).catch(() => null);
      if (!info?.isFile()) return;
      held.set(`${info.dev}:${info.ino}`, { bytes: info.blocks * 512 });
    }),
  );
}

const O_MOUNT = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
const O_SEEDED = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/**
 * Opens the sandbox's tmpfs mounts through its pid 1's root and keeps them. The path holds no name the program
 * can change (its root is bwrap's read-only tmpfs, the mounts are mount points, and it cannot chroot or mount);
 * O_NOFOLLOW refuses a link as the last step all the same. Not before pid 1 is in its own root (bwrap's child
 * starts in the host's, and its /tmp would be the host's). The pid is checked after the open: had pid 1 died
 * and its number gone to a host process, that process's parent would not be bwrap (not reaped by the host yet).
 */
async function openMounts(watch: Watch, pid: number): Promise<void> {
  watch.opening = true;
  const handles: FileHandle[] = [];
  const seeded: FileHandle[] = [];
  try {
    const [root, host] = await Promise.all([stat(`/proc/${pid}/root`), stat('/')]);
    if (root.dev === host.dev && root.ino === host.ino) throw new Error('not in its root yet');
    for (const mount of TMPFS_MOUNTS) {
      const handle = await open(`/proc/${pid}/root/${mount}`, O_MOUNT).catch(() => null);
      if (handle) handles.push(handle);
    }
    for (const file of SEEDED_FILES) {
      const handle = await open(`/proc/${pid}/root${file}`, O_SEEDED).catch(() => null);
      if (handle) seeded.push(handle);
    }
    const line = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
    const ppid = parentOf(line);
    const parent = watch.ownRoot ? watch.rootParent : watch.rootPid;
    if (ppid !== parent || watch.done || handles.length === 0) throw new Error('not the sandbox');
    watch.mounts = handles;
    watch.seeded = seeded;
  } catch {
    for (const handle of [...handles, ...seeded]) await handle.close().catch(() => undefined);
  } finally {
    watch.opening = false;
  }
}

/** Inodes and bytes in use on the sandbox's tmpfs mounts, from the kernel's own count (statfs of each). */
async function measureMounts(watch: Watch): Promise<void> {
  const { workspaceBytes, workspaceEntries } = watch.limits;
  const mounts = watch.mounts;
  if (!mounts) return;
  let bytes = 0;
  let entries = 0;
  for (const handle of mounts) {
    // /proc/self/fd/N is the directory held open, resolved by the kernel without a name lookup.
    const fs = await statfs(`/proc/self/fd/${handle.fd}`).catch(() => null);
    if (!fs || watch.done) return;
    bytes += (fs.blocks - fs.bfree) * fs.bsize;
    // The mount's own root is one inode in use; a tmpfs without an inode count (nr_inodes=0) reports none.
    if (fs.files > 0) entries += Math.max(0, fs.files - fs.ffree - 1);
  }
  // The seeded files bound over the kernel's randomness are the program's to write too (bwrap-args.ts), on
  // bwrap's unsized tmpfs: held open with the mounts, measured through the open file.
  for (const handle of watch.seeded ?? []) {
    const info = await handle.stat().catch(() => null);
    if (watch.done) return;
    bytes += (info?.blocks ?? 0) * 512;
  }
  if (entries > workspaceEntries) {
    return watch.onBreach({
      code: 'FILE_LIMIT',
      message: `the program made more than ${workspaceEntries} files in its workspace`,
    });
  }
  if (bytes > workspaceBytes) {
    return watch.onBreach({
      code: 'FILE_LIMIT',
      message: `the program wrote more than ${workspaceBytes} bytes to its workspace`,
    });
  }
}
