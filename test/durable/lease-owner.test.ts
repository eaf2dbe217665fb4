import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { describeLeaseOwner, leaseOwnerGone, newLeaseOwner } from '../../src/durable/lease-owner.ts';

// A lease owner is judged gone only when it is certainly a dead process of this machine, boot and pid namespace:
// anything else (alive, stopped, unsignalable, ours, elsewhere, unknown form) keeps its lease until it runs out.

const linux = existsSync('/proc/sys/kernel/random/boot_id') && existsSync('/proc/self/ns/pid');
/** An owner id of this machine for `pid`, with the start time /proc gives it (or `start`). */
const withPid = (owner: string, pid: number, start?: string): string => {
  const [host, , , machine, nonce] = owner.split(':');
  return `${host}:${pid}:${start ?? startOf(pid)}:${machine}:${nonce}`;
};
function startOf(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? '';
}

describe.skipIf(!linux)('lease owners (skipped: needs /proc boot_id and pid namespace, i.e. Linux)', () => {
  it('names host, pid, start time, machine and a nonce; two runtimes of one process get different ids', () => {
    const a = newLeaseOwner();
    const b = newLeaseOwner();
    expect(a.split(':')).toHaveLength(5);
    expect(a.split(':')[1]).toBe(String(process.pid));
    expect(a.split(':')[2]).toBe(startOf(process.pid));
    expect(a).not.toBe(b);
    expect(describeLeaseOwner(withPid(a, 4242, '1'))).toMatch(/^pid 4242 on host /);
    expect(describeLeaseOwner('worker-7')).toBe('worker-7');
  });

  it('is gone once its process has exited, not while it runs or is stopped', async () => {
    const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)']);
    await once(child, 'spawn');
    const owner = withPid(newLeaseOwner(), child.pid ?? -1);
    expect(leaseOwnerGone(owner)).toBe(false);
    child.kill('SIGSTOP');
    expect(leaseOwnerGone(owner)).toBe(false);
    child.kill('SIGKILL');
    await once(child, 'exit');
    expect(leaseOwnerGone(owner)).toBe(true);
  });

  it('is never gone for this process, another host, another machine or namespace, or another form', async () => {
    const child = spawn(process.execPath, ['-e', '']);
    await once(child, 'exit');
    const dead = child.pid ?? -1;
    const [host, , start, machine, nonce] = newLeaseOwner().split(':');
    expect(leaseOwnerGone(`${host}:${dead}:${start}:${machine}:${nonce}`)).toBe(true);
    // The form written before the start time was added is judged by the pid alone.
    expect(leaseOwnerGone(`${host}:${dead}:${machine}:${nonce}`)).toBe(true);
    // A second runtime of this very process (another nonce) is alive.
    expect(leaseOwnerGone(`${host}:${process.pid}:${start}:${machine}:other`)).toBe(false);
    expect(leaseOwnerGone(`${host}:${process.pid}:${machine}:other`)).toBe(false);
    expect(leaseOwnerGone(`elsewhere:${dead}:${start}:${machine}:${nonce}`)).toBe(false);
    expect(leaseOwnerGone(`${host}:${dead}:${start}:0123456789ab:${nonce}`)).toBe(false);
    expect(leaseOwnerGone(`${host}:${dead}:${start}:-:${nonce}`)).toBe(false);
    for (const other of [
      `runtime-${dead}-abc`,
      'w',
      '',
      `${host}:x:${machine}:${nonce}`,
      `${host}:0:${machine}:n`,
    ]) {
      expect(leaseOwnerGone(other), other).toBe(false);
    }
  });

  it('is gone when its pid now belongs to another process (another start time)', async () => {
    const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)']);
    await once(child, 'spawn');
    const pid = child.pid ?? -1;
    const owner = newLeaseOwner();
    expect(leaseOwnerGone(withPid(owner, pid))).toBe(false);
    // The same pid, started at another time: the owner was an earlier process that had this pid.
    expect(leaseOwnerGone(withPid(owner, pid, String(Number(startOf(pid)) - 1)))).toBe(true);
    // Unknown start time (an id of the older form, or `-`): the live pid counts as the owner.
    expect(leaseOwnerGone(withPid(owner, pid, '-'))).toBe(false);
    child.kill('SIGKILL');
    await once(child, 'exit');
  });

  it('a zombie (exited, not yet reaped by its parent) is gone', async () => {
    // sh starts a short sleep, then becomes a long one that never reaps it.
    const parent = spawn('sh', ['-c', 'sleep 0.1 & echo $!; exec sleep 30'], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const [line] = (await once(parent.stdout, 'data')) as [Buffer];
    const zombie = Number(line.toString().trim());
    try {
      for (let i = 0; i < 100 && !readFileSync(`/proc/${zombie}/stat`, 'utf8').includes(') Z '); i++) {
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(leaseOwnerGone(withPid(newLeaseOwner(), zombie))).toBe(true);
    } finally {
      parent.kill('SIGKILL');
    }
  });
});
