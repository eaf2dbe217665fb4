import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { leaseOwnerGone, newLeaseOwner } from '../../src/durable/lease-owner.ts';

// A lease owner is judged gone only when it is certainly a dead process of this machine, boot and pid namespace:
// anything else (alive, stopped, unsignalable, ours, elsewhere, unknown form) keeps its lease until it runs out.

const linux = existsSync('/proc/sys/kernel/random/boot_id') && existsSync('/proc/self/ns/pid');
const withPid = (owner: string, pid: number): string => {
  const [host, , machine, nonce] = owner.split(':');
  return `${host}:${pid}:${machine}:${nonce}`;
};

describe.skipIf(!linux)('lease owners (skipped: needs /proc boot_id and pid namespace, i.e. Linux)', () => {
  it('names host, pid, machine and a nonce; two runtimes of one process get different ids', () => {
    const a = newLeaseOwner();
    const b = newLeaseOwner();
    expect(a.split(':')).toHaveLength(4);
    expect(a.split(':')[1]).toBe(String(process.pid));
    expect(a).not.toBe(b);
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
    const [host, , machine, nonce] = newLeaseOwner().split(':');
    expect(leaseOwnerGone(`${host}:${dead}:${machine}:${nonce}`)).toBe(true);
    // A second runtime of this very process (another nonce) is alive.
    expect(leaseOwnerGone(`${host}:${process.pid}:${machine}:other`)).toBe(false);
    expect(leaseOwnerGone(`elsewhere:${dead}:${machine}:${nonce}`)).toBe(false);
    expect(leaseOwnerGone(`${host}:${dead}:0123456789ab:${nonce}`)).toBe(false);
    expect(leaseOwnerGone(`${host}:${dead}:-:${nonce}`)).toBe(false);
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
});
