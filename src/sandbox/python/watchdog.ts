import type { Dirent } from 'node:fs';
import { lstat, readdir, readFile, readlink, stat } from 'node:fs/promises';
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
 * - the workspace, on the host's disk: RLIMIT_FSIZE bounds one file, not how many ("many files in the
 *   workspace"), nor files unlinked but kept open;
 * - CPU time: RLIMIT_CPU is per process, so forks each get the whole budget.
 *
 * The host polls: every WATCH_INTERVAL_MS one scan of /proc serves every watched sandbox. A program can overshoot
 * by what it allocates or writes in one interval; it cannot keep going.
 */
export const WATCH_INTERVAL_MS = 100;

export interface WatchLimits {
  /** Anonymous and shared memory of all the sandbox's processes, plus its open memfds. */
  readonly memoryBytes: number;
  /** Disk blocks under the workspace, plus deleted files its processes keep open. */
  readonly workspaceBytes: number;
  /** Files, directories and links under the workspace. */
  readonly workspaceEntries: number;
  /** CPU time of all the sandbox's processes (those it reaped included) past `cpuBaselineMs`. */
  readonly cpuMs: number;
  /** What the sandbox had used when the program started (sandboxCpuMs). */
  readonly cpuBaselineMs: number;
}

export interface Breach {
  readonly code: 'MEMORY_LIMIT' | 'FILE_LIMIT' | 'CPU_LIMIT';
  readonly message: string;
}

interface Watch {
  readonly rootPid: number;
  /** The sandbox's root as the host reaches it (`/proc/<pid>/root` of one of its processes), once scanned. */
  root: string | null;
  readonly limits: WatchLimits;
  readonly onBreach: (breach: Breach) => void;
  /** Deleted files the sandbox's processes hold open, from the last process scan. */
  heldDeletedBytes: number;
  walking: boolean;
  done: boolean;
}

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
): () => void {
  const watch: Watch = {
    rootPid,
    root: null,
    limits,
    heldDeletedBytes: 0,
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
    void walkWorkspace(watch).finally(() => (watch.walking = false));
  }
}

async function scanProcesses(): Promise<void> {
  const { children, cpuMs } = await processTable();
  await Promise.all(
    [...watches].map(async (watch) => {
      const pids = descendants(children, watch.rootPid);
      if (pids.length === 0) return;
      const used = treeCpuMs(pids, cpuMs) - watch.limits.cpuBaselineMs;
      if (used > watch.limits.cpuMs) {
        return watch.onBreach({
          code: 'CPU_LIMIT',
          message: `the program's processes computed for more than ${watch.limits.cpuMs} ms of CPU time`,
        });
      }
      // The deepest process is inside the sandbox's mount namespace: its root is where the tmpfs mounts are.
      watch.root = `/proc/${pids.at(-1) ?? watch.rootPid}/root`;
      const held = new Map<string, { bytes: number; memfd: boolean }>();
      const resident = await Promise.all(
        pids.map(async (pid) => {
          await heldFiles(pid, held);
          return residentBytes(pid);
        }),
      );
      let memory = resident.reduce((a, b) => a + b, 0);
      let deleted = 0;
      for (const file of held.values()) {
        if (file.memfd) memory += file.bytes;
        else deleted += file.bytes;
      }
      watch.heldDeletedBytes = deleted;
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

/**
 * CPU time the processes under `rootPid` used so far, their reaped children's included. Walks the tree through
 * /proc/<pid>/task/<tid>/children (a few reads for a sandbox) rather than all of /proc, where the kernel has it.
 */
export async function sandboxCpuMs(rootPid: number): Promise<number> {
  let total = 0;
  const stack = [rootPid];
  const seen = new Set<number>();
  while (stack.length > 0) {
    const pid = stack.pop() as number;
    if (seen.has(pid)) continue;
    seen.add(pid);
    const [stat, tasks] = await Promise.all([
      readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null),
      readdir(`/proc/${pid}/task`).catch(() => [] as string[]),
    ]);
    if (stat !== null) total += statCpuMs(stat);
    const lists = await Promise.all(
      tasks.map((tid) => readFile(`/proc/${pid}/task/${tid}/children`, 'utf8').catch(() => null)),
    );
    if (lists.some((l) => l === null) && stat !== null) {
      // No children files (CONFIG_PROC_CHILDREN off): the whole process table.
      const { children, cpuMs } = await processTable();
      return treeCpuMs(descendants(children, rootPid), cpuMs);
    }
    for (const list of lists)
      for (const child of (list ?? '').split(' ')) if (child) stack.push(Number(child));
  }
  return total;
}

/** utime + stime + cutime + cstime of one /proc/<pid>/stat line, in ms. */
function statCpuMs(text: string): number {
  // "pid (comm) state ppid ... utime stime cutime cstime ...": comm may hold spaces and parentheses.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return (fields.slice(11, 15).reduce((sum, f) => sum + (Number(f) || 0), 0) * 1000) / TICKS_PER_SECOND;
}

function treeCpuMs(pids: readonly number[], cpuMs: ReadonlyMap<number, number>): number {
  return pids.reduce((sum, pid) => sum + (cpuMs.get(pid) ?? 0), 0);
}

/** Every process of the host by its parent, and the CPU time each used (its waited-for children's included). */
async function processTable(): Promise<{ children: Map<number, number[]>; cpuMs: Map<number, number> }> {
  const children = new Map<number, number[]>();
  const cpuMs = new Map<number, number>();
  let names: string[];
  try {
    names = await readdir('/proc');
  } catch {
    return { children, cpuMs };
  }
  await Promise.all(
    names.map(async (name) => {
      if (!/^\d+$/.test(name)) return;
      const text = await readFile(`/proc/${name}/stat`, 'utf8').catch(() => null);
      if (text === null) return;
      // "pid (comm) state ppid ...": comm may hold spaces and parentheses.
      const ppid = Number(text.slice(text.lastIndexOf(')') + 2).split(' ')[1]);
      const list = children.get(ppid);
      if (list) list.push(Number(name));
      else children.set(ppid, [Number(name)]);
      cpuMs.set(Number(name), statCpuMs(text));
    }),
  );
  return { children, cpuMs };
}

function descendants(children: ReadonlyMap<number, number[]>, root: number): number[] {
  const out: number[] = [];
  const stack = [root];
  const seen = new Set<number>();
  while (stack.length > 0) {
    const pid = stack.pop() as number;
    if (seen.has(pid)) continue;
    seen.add(pid);
    out.push(pid);
    for (const child of children.get(pid) ?? []) stack.push(child);
  }
  return out;
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

/** memfds and deleted files `pid` holds open, by inode (one file open many times counts once). */
async function heldFiles(pid: number, held: Map<string, { bytes: number; memfd: boolean }>): Promise<void> {
  const dir = `/proc/${pid}/fd`;
  const fds = await readdir(dir).catch(() => [] as string[]);
  await Promise.all(
    fds.map(async (fd) => {
      const target = await readlink(join(dir, fd)).catch(() => '');
      const memfd = target.startsWith('/memfd:');
      if (!memfd && !target.endsWith(' (deleted)')) return;
      const info = await stat(join(dir, fd)).catch(() => null);
      if (!info?.isFile()) return;
      held.set(`${info.dev}:${info.ino}`, { bytes: info.blocks * 512, memfd });
    }),
  );
}

async function walkWorkspace(watch: Watch): Promise<void> {
  const { workspaceBytes, workspaceEntries } = watch.limits;
  let bytes = watch.heldDeletedBytes;
  let entries = 0;
  if (watch.root === null) return;
  // The sandbox's own tmpfs mounts (sized, but their inodes are host memory no size bounds).
  const tops = ['workspace', 'tmp', 'dev/shm'].map((d) => join(watch.root as string, d));
  const dirs = [...tops];
  while (dirs.length > 0 && !watch.done) {
    const dir = dirs.pop() as string;
    let list: Dirent[];
    try {
      list = await readdir(dir, { withFileTypes: true });
    } catch (e) {
      // The sandbox's root goes when its process does; a top directory it never had is nothing to count.
      if ((e as NodeJS.ErrnoException).code === 'ENOENT' || tops.includes(dir)) continue;
      // A directory the host cannot read (the program made it so) could hide anything.
      return watch.onBreach({
        code: 'FILE_LIMIT',
        message: 'the program made part of its workspace unreadable to the host',
      });
    }
    entries += list.length;
    if (entries > workspaceEntries) break;
    const sizes = await Promise.all(
      list.map(async (entry) => {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) dirs.push(path);
        return entry.isFile() ? ((await lstat(path).catch(() => null))?.blocks ?? 0) * 512 : 0;
      }),
    );
    for (const size of sizes) bytes += size;
    if (bytes > workspaceBytes) break;
  }
  // The seeded files bound over the kernel's randomness are the program's to write too (bwrap-args.ts): lstat
  // only (a mount point on a read-only /dev or /proc, which the program cannot swap for a link).
  const seeded = await Promise.all(
    SEEDED_FILES.map((file) =>
      lstat(join(watch.root as string, file)).then(
        (info) => info.blocks * 512,
        () => 0,
      ),
    ),
  );
  for (const size of seeded) bytes += size;
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
