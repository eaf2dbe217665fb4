import { constants } from 'node:fs';
import { access, mkdir, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { CodecallError } from '../../errors/index.ts';
import {
  errno,
  exists,
  keyed,
  killAll,
  message,
  pidsIn,
  read,
  until,
  write,
  writeIfPresent,
} from './cgroup-files.ts';

export interface CgroupLimits {
  memoryBytes?: number;
  pids?: number;
  /** Fraction of one CPU, e.g. 1 (or 0.5, or 2). */
  cpuQuota?: number;
}

export interface Cgroup {
  /** For diagnostics. */
  readonly path: string;
  /** Moves a process in (its children follow). */
  add(pid: number): Promise<void>;
  /** Changes the memory limit (an execution's own, once a pooled sandbox gets one). */
  setMemory(bytes: number): Promise<void>;
  memoryPeakBytes(): Promise<number | null>;
  /** memory.events oom_kill (v2) / memory.oom_control oom_kill, else failcnt (v1). */
  oomKilled(): Promise<boolean>;
  /** Ends every process in it: freeze, SIGKILL all (cgroup.procs), thaw; then removes the group. */
  destroy(): Promise<void>;
}

export interface CgroupManager {
  readonly version: 1 | 2;
  create(name: string, limits: CgroupLimits): Promise<Cgroup>;
}

export type CgroupDetection = { manager: CgroupManager } | { manager: null; reason: string };

const DEFAULT_ROOT = '/sys/fs/cgroup';
const PARENT = 'codecall';
const CPU_PERIOD_US = 100_000;
/** The kernel refuses CFS quotas under 1ms. */
const MIN_CPU_QUOTA_US = 1_000;
const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/;
const V1_REQUIRED = ['memory', 'pids', 'freezer'] as const;
const V2_REQUIRED = ['memory', 'pids'] as const;
const FREEZE_WAIT_MS = 2_000;
const EMPTY_WAIT_MS = 5_000;

function checkLimits(name: string, limits: CgroupLimits): void {
  if (!NAME.test(name)) {
    throw new CodecallError('INVALID_ARGUMENT', `bad cgroup name "${name}"`, { details: { name } });
  }
  for (const [key, value] of Object.entries(limits) as [string, unknown][]) {
    if (value === undefined) continue;
    const whole = key !== 'cpuQuota';
    if (typeof value !== 'number' || !(value > 0) || !Number.isFinite(value) || (whole && value % 1 !== 0)) {
      throw new CodecallError('INVALID_ARGUMENT', `cgroup limit "${key}" must be a positive number`, {
        details: { field: key },
      });
    }
  }
}

const cpuQuotaUs = (fraction: number): number =>
  Math.max(MIN_CPU_QUOTA_US, Math.round(fraction * CPU_PERIOD_US));

/** Makes the group directories, runs `configure`, and on failure removes what it made. */
async function makeGroup(dirs: readonly string[], configure: () => Promise<void>): Promise<void> {
  const made: string[] = [];
  try {
    // At once: a sandbox's start waits for its group (four directories on v1).
    const results = await Promise.allSettled(dirs.map((dir) => mkdir(dir).then(() => made.push(dir))));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
    await configure();
  } catch (error) {
    for (const dir of made.reverse()) await rmdir(dir).catch(() => undefined);
    throw new CodecallError('SANDBOX_UNAVAILABLE', `cannot create cgroup ${dirs[0]}: ${message(error)}`, {
      cause: error,
    });
  }
}

async function removeGroup(dirs: readonly string[]): Promise<void> {
  for (const dir of dirs) {
    try {
      await rmdir(dir);
    } catch (error) {
      if (errno(error) === 'ENOENT') continue;
      throw new CodecallError('INTERNAL', `cannot remove cgroup ${dir}: ${message(error)}`, { cause: error });
    }
  }
}

/** Runs `destroy` once at a time; calls during a run share it, and a failed run may be retried. */
function once(destroy: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | undefined;
  return () =>
    (running ??= destroy().catch((error: unknown) => {
      running = undefined;
      throw error;
    }));
}

async function addTo(dirs: readonly string[], pid: number): Promise<void> {
  try {
    // At once: each move waits for the kernel (an RCU grace period on v1, ~5 ms), and concurrent ones share it.
    await Promise.all(dirs.map((dir) => write(join(dir, 'cgroup.procs'), pid)));
  } catch (error) {
    throw new CodecallError('SANDBOX_UNAVAILABLE', `cannot move pid ${pid} into cgroup: ${message(error)}`, {
      cause: error,
      details: { pid },
    });
  }
}

function v1Manager(root: string, hasCpu: boolean): CgroupManager {
  return {
    version: 1,
    async create(name, limits) {
      checkLimits(name, limits);
      if (limits.cpuQuota !== undefined && !hasCpu) {
        throw new CodecallError('SANDBOX_UNAVAILABLE', `cgroup v1 cpu controller is not mounted at ${root}`);
      }
      const dir = (controller: string): string => join(root, controller, PARENT, name);
      const [freezer, pids, memory] = [dir('freezer'), dir('pids'), dir('memory')];
      // A cpu group only for a quota: a group of its own competes with the host's processes as one task, which
      // slowed a sandbox's start three times over on a busy machine.
      const cpu = hasCpu && limits.cpuQuota !== undefined ? dir('cpu') : undefined;
      // The freezer first: a process in it can always be frozen by destroy(), whatever else failed.
      const dirs = cpu ? [freezer, pids, memory, cpu] : [freezer, pids, memory];
      await makeGroup(dirs, async () => {
        const memoryLimit = async (bytes: number) => {
          await write(join(memory, 'memory.limit_in_bytes'), bytes);
          // memsw (memory + swap) exists only with swap accounting; without it swap would stretch the limit.
          await writeIfPresent(join(memory, 'memory.memsw.limit_in_bytes'), bytes);
        };
        const cpuLimit = async (fraction: number) => {
          await write(join(cpu as string, 'cpu.cfs_period_us'), CPU_PERIOD_US);
          await write(join(cpu as string, 'cpu.cfs_quota_us'), cpuQuotaUs(fraction));
        };
        // Each controller's files at once (within one, in order).
        await Promise.all([
          limits.memoryBytes === undefined ? undefined : memoryLimit(limits.memoryBytes),
          limits.pids === undefined ? undefined : write(join(pids, 'pids.max'), limits.pids),
          cpu && limits.cpuQuota !== undefined ? cpuLimit(limits.cpuQuota) : undefined,
        ]);
      });
      const state = join(freezer, 'freezer.state');
      return {
        path: join(root, `{${cpu ? 'freezer,pids,memory,cpu' : 'freezer,pids,memory'}}`, PARENT, name),
        add: (pid) => addTo(dirs, pid),
        async setMemory(bytes) {
          const limit = join(memory, 'memory.limit_in_bytes');
          const memsw = join(memory, 'memory.memsw.limit_in_bytes');
          // memsw must stay at least the memory limit: lower memory first, raise memsw first.
          const current = Number(((await read(limit)) ?? '0').trim());
          if (bytes < current) {
            await write(limit, bytes);
            await writeIfPresent(memsw, bytes);
          } else {
            await writeIfPresent(memsw, bytes);
            await write(limit, bytes);
          }
        },
        async memoryPeakBytes() {
          const text = await read(join(memory, 'memory.max_usage_in_bytes'));
          return text === null ? null : Number(text.trim());
        },
        async oomKilled() {
          const control = await keyed(join(memory, 'memory.oom_control'));
          const kills = control.get('oom_kill');
          if (kills !== undefined) return kills > 0;
          // Kernels before 4.13 do not count kills; hitting the limit is the closest sign.
          return Number(((await read(join(memory, 'memory.failcnt'))) ?? '0').trim()) > 0;
        },
        destroy: once(async () => {
          if ((await read(state)) === null) return; // already gone
          // Frozen processes cannot fork while we read and kill the list; SIGKILL lands once thawed.
          await write(state, 'FROZEN');
          await until(async () => (await read(state))?.trim() === 'FROZEN', FREEZE_WAIT_MS);
          killAll([...new Set((await Promise.all(dirs.map(pidsIn))).flat())]);
          await write(state, 'THAWED');
          await waitEmpty(dirs);
          // The freezer goes last: while it is there, a retried destroy() still has something to do.
          await removeGroup([...dirs].reverse());
        }),
      };
    },
  };
}

/** Waits for the killed processes to leave, killing again anything that slipped past a stalled freeze. */
async function waitEmpty(dirs: readonly string[]): Promise<void> {
  await until(async () => {
    const left = [...new Set((await Promise.all(dirs.map(pidsIn))).flat())];
    killAll(left);
    return left.length === 0;
  }, EMPTY_WAIT_MS);
}

function v2Manager(parent: string, hasCpu: boolean): CgroupManager {
  return {
    version: 2,
    async create(name, limits) {
      checkLimits(name, limits);
      if (limits.cpuQuota !== undefined && !hasCpu) {
        throw new CodecallError(
          'SANDBOX_UNAVAILABLE',
          `cgroup v2 cpu controller is not enabled in ${parent}`,
        );
      }
      const dir = join(parent, name);
      const file = (name: string): string => join(dir, name);
      await makeGroup([dir], async () => {
        if (limits.memoryBytes !== undefined) {
          await write(file('memory.max'), limits.memoryBytes);
          await writeIfPresent(file('memory.swap.max'), 0);
          // An OOM ends the whole program rather than whichever of its processes is largest.
          await writeIfPresent(file('memory.oom.group'), 1);
        }
        if (limits.pids !== undefined) await write(file('pids.max'), limits.pids);
        if (limits.cpuQuota !== undefined) {
          await write(file('cpu.max'), `${cpuQuotaUs(limits.cpuQuota)} ${CPU_PERIOD_US}`);
        }
      });
      const populated = async (): Promise<boolean> => {
        const events = await keyed(file('cgroup.events'));
        const flag = events.get('populated');
        return flag === undefined ? (await pidsIn(dir)).length > 0 : flag !== 0;
      };
      return {
        path: dir,
        add: (pid) => addTo([dir], pid),
        async setMemory(bytes) {
          await write(file('memory.max'), bytes);
        },
        async memoryPeakBytes() {
          const text = await read(file('memory.peak')); // Linux 5.19+
          return text === null ? null : Number(text.trim());
        },
        async oomKilled() {
          return ((await keyed(file('memory.events'))).get('oom_kill') ?? 0) > 0;
        },
        destroy: once(async () => {
          if (!(await exists(dir))) return;
          if (await exists(file('cgroup.kill'))) {
            await write(file('cgroup.kill'), 1); // Linux 5.14+: one atomic kill of the whole tree
          } else {
            await write(file('cgroup.freeze'), 1);
            await until(async () => (await keyed(file('cgroup.events'))).get('frozen') === 1, FREEZE_WAIT_MS);
            killAll(await pidsIn(dir));
            await write(file('cgroup.freeze'), 0);
          }
          await until(async () => {
            if (!(await populated())) return true;
            killAll(await pidsIn(dir));
            return false;
          }, EMPTY_WAIT_MS);
          await removeGroup([dir]);
        }),
      };
    },
  };
}

async function detectV2(root: string): Promise<CgroupDetection> {
  const available = ((await read(join(root, 'cgroup.controllers'))) ?? '').trim().split(/\s+/);
  const missing = V2_REQUIRED.filter((c) => !available.includes(c));
  if (missing.length > 0) {
    return { manager: null, reason: `cgroup v2 at ${root} lacks the ${missing.join(', ')} controller(s)` };
  }
  const wanted = ['memory', 'pids', 'cpu'].filter((c) => available.includes(c));
  const enable = wanted.map((c) => `+${c}`).join(' ');
  // Children get a controller only if their parent lists it in cgroup.subtree_control.
  const enabled = ((await read(join(root, 'cgroup.subtree_control'))) ?? '').trim().split(/\s+/);
  if (!wanted.every((c) => enabled.includes(c))) await write(join(root, 'cgroup.subtree_control'), enable);
  const parent = join(root, PARENT);
  await mkdir(parent, { recursive: true });
  await access(parent, constants.W_OK); // mkdir succeeds on an existing parent even if it is not ours
  await write(join(parent, 'cgroup.subtree_control'), enable);
  return { manager: v2Manager(parent, wanted.includes('cpu')) };
}

async function detectV1(root: string): Promise<CgroupDetection> {
  for (const controller of V1_REQUIRED) {
    if (!(await exists(join(root, controller, 'cgroup.procs')))) {
      return {
        manager: null,
        reason: `no cgroup v2 at ${root} and the cgroup v1 ${controller} controller is not mounted there`,
      };
    }
  }
  const hasCpu = await exists(join(root, 'cpu', 'cpu.cfs_quota_us'));
  for (const controller of hasCpu ? [...V1_REQUIRED, 'cpu'] : V1_REQUIRED) {
    const parent = join(root, controller, PARENT);
    await mkdir(parent, { recursive: true });
    await access(parent, constants.W_OK); // mkdir succeeds on an existing parent even if it is not ours
  }
  return { manager: v1Manager(root, hasCpu) };
}

/** Detects v2 (unified, with the needed controllers delegated/enabled), else v1 (memory + pids + freezer mounted and writable), else null with the reason. */
export async function detectCgroups(root: string = DEFAULT_ROOT): Promise<CgroupDetection> {
  try {
    if (await exists(join(root, 'cgroup.controllers'))) return await detectV2(root);
    return await detectV1(root);
  } catch (error) {
    const code = errno(error);
    const why = code === 'EACCES' || code === 'EROFS' || code === 'EPERM' ? 'not writable' : 'not usable';
    return { manager: null, reason: `cgroups at ${root} are ${why}: ${message(error)}` };
  }
}
