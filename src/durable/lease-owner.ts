import { createHash, randomInt } from 'node:crypto';
import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';

/**
 * Lease owner ids that say where their process runs: `host:pid:machine:nonce`. `machine` hashes the boot id and
 * the pid namespace (Linux), so a pid is only ever judged on the machine, boot and namespace it belongs to: two
 * containers sharing a database (even with one host name) never take each other's pids for their own.
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

/** A new owner id for a runtime of this process. */
export function newLeaseOwner(): string {
  const { host, machine } = thisPlace();
  return `${host}:${process.pid}:${machine ?? '-'}:${randomInt(1e9).toString(36)}`;
}

/**
 * Whether `owner` is a runtime of a process on this machine (same host, boot and pid namespace) that no longer
 * exists. Only a certain death counts (ESRCH); a pid we cannot signal (EPERM), a stopped process, our own pid (a
 * second runtime in this process) or an owner id of another form is alive as far as we know.
 */
export function leaseOwnerGone(owner: string): boolean {
  const { host, machine } = thisPlace();
  if (machine === null) return false;
  const parts = owner.split(':');
  if (parts.length !== 4 || parts[0] !== host || parts[2] !== machine) return false;
  const pid = Number(parts[1]);
  if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
