import { createHash, randomInt } from 'node:crypto';
import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';

/**
 * Lease owner ids that say where their process runs: `host:pid:start:machine:nonce`. `machine` hashes the boot id
 * and the pid namespace (Linux), so a pid is only ever judged on the machine, boot and namespace it belongs to: two
 * containers sharing a database (even with one host name) never take each other's pids for their own. `start` is
 * the process's start time (clock ticks since boot, /proc/PID/stat), so a pid reused by a later process is not
 * taken for the owner. Ids written before `start` was added (`host:pid:machine:nonce`) are judged by the pid alone.
 */
interface Place {
  readonly host: string;
  /** Null where the platform gives no boot id or pid namespace: then no owner is ever judged gone early. */
  readonly machine: string | null;
}

let here: Place | undefined;

function thisPlace(): Place {
  if (here) return here;
  const host = hostname().replaceAll(':', '_') || 'host';
  let machine: string | null = null;
  try {
    const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    const pidNamespace = readlinkSync('/proc/self/ns/pid');
    machine = createHash('sha256').update(`${boot}\n${pidNamespace}`).digest('hex').slice(0, 12);
  } catch {
    // Not Linux, or /proc is hidden: leases of dead owners run out as usual.
  }
  here = { host, machine };
  return here;
}

/** What /proc/PID/stat says of a process: its state letter and start time; null when it cannot be read. */
function processStat(pid: number | 'self'): { state: string; start: string } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // `pid (comm) state ppid ...`: comm may hold spaces and parentheses, so fields are counted after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const state = fields[0];
    const start = fields[19]; // field 22, starttime
    return state !== undefined && start !== undefined && /^\d+$/.test(start) ? { state, start } : null;
  } catch {
    return null;
  }
}

/** A new owner id for a runtime of this process. */
export function newLeaseOwner(): string {
  const { host, machine } = thisPlace();
  const start = machine === null ? null : (processStat('self')?.start ?? null);
  return `${host}:${process.pid}:${start ?? '-'}:${machine ?? '-'}:${randomInt(1e9).toString(36)}`;
}

/** The parts of an owner id of either form; null for an id of another form. */
function parseOwner(
  owner: string,
): { host: string; pid: number; start: string | null; machine: string } | null {
  const parts = owner.split(':');
  if (parts.length !== 4 && parts.length !== 5) return null;
  const [host = '', pidText = '', ...rest] = parts;
  const start = parts.length === 5 ? (rest[0] ?? '-') : '-';
  const machine = parts.length === 5 ? (rest[1] ?? '') : (rest[0] ?? '');
  const pid = Number(pidText);
  if (!/^\d+$/.test(pidText) || !Number.isSafeInteger(pid) || pid <= 0) return null;
  return { host, pid, start: /^\d+$/.test(start) ? start : null, machine };
}

/**
 * Whether `owner` is a runtime of a process on this machine (same host, boot and pid namespace) that no longer
 * exists: its pid is gone (ESRCH), a zombie (it runs no code any more), or now another process's (its start time
 * differs from the one in the id). A pid we cannot signal (EPERM) and cannot read, a stopped process, our own pid
 * (a second runtime in this process) or an owner id of another form is alive as far as we know.
 */
export function leaseOwnerGone(owner: string): boolean {
  const { host, machine } = thisPlace();
  if (machine === null) return false;
  const parsed = parseOwner(owner);
  if (parsed === null || parsed.host !== host || parsed.machine !== machine) return false;
  const { pid } = parsed;
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ESRCH') return true;
    if ((e as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  // The pid is taken: by the owner, by its zombie, or by a later process that got the pid again.
  const stat = processStat(pid);
  if (stat === null) return false;
  if (stat.state === 'Z' || stat.state === 'X') return true;
  return parsed.start !== null && stat.start !== parsed.start;
}

/**
 * Who holds a lease, for people: `pid 123 on host web-1` for an owner id of ours (`this process` for our own
 * pid), else the id as it is.
 */
export function describeLeaseOwner(owner: string): string {
  const parsed = parseOwner(owner);
  if (parsed === null) return owner;
  if (parsed.pid === process.pid && parsed.host === thisPlace().host)
    return `this process (pid ${parsed.pid})`;
  return `pid ${parsed.pid} on host ${parsed.host}`;
}
