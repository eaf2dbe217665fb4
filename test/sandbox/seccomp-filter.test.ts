import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { endianness, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import {
  BLOCKED_SYSCALLS,
  SECCOMP_RET_ALLOW,
  SECCOMP_RET_ERRNO,
  SECCOMP_RET_KILL_PROCESS,
  SOCKET_FAMILIES,
  SYSCALL_NUMBERS,
  seccompFilter,
} from '../../src/sandbox/python/seccomp-filter.ts';
import type { SeccompArch } from '../../src/sandbox/python/seccomp-filter.ts';

interface Insn {
  code: number;
  jt: number;
  jf: number;
  k: number;
}

function decode(program: Buffer): Insn[] {
  expect(program.length % 8).toBe(0);
  const le = endianness() === 'LE';
  const out: Insn[] = [];
  for (let at = 0; at < program.length; at += 8) {
    out.push({
      code: le ? program.readUInt16LE(at) : program.readUInt16BE(at),
      jt: program.readUInt8(at + 2),
      jf: program.readUInt8(at + 3),
      k: le ? program.readUInt32LE(at + 4) : program.readUInt32BE(at + 4),
    });
  }
  return out;
}

const AUDIT = { x64: 0xc000003e, arm64: 0xc00000b7 } as const;

/** Runs the program the way the kernel would, on a struct seccomp_data built from the arguments. */
function evaluate(program: Buffer, call: { arch: number; nr: number; arg0?: number }): number {
  const data = Buffer.alloc(64);
  data.writeInt32LE(call.nr, 0);
  data.writeUInt32LE(call.arch, 4);
  data.writeUInt32LE((call.arg0 ?? 0) >>> 0, 16);
  const insns = decode(program);
  let acc = 0;
  for (let pc = 0; pc < insns.length; pc += 1) {
    const { code, jt, jf, k } = insns[pc]!;
    if (code === 0x20) acc = data.readUInt32LE(k);
    else if (code === 0x15) pc += acc === k ? jt : jf;
    else if (code === 0x45) pc += (acc & k) !== 0 ? jt : jf;
    else if (code === 0x06) return k;
    else throw new Error(`unexpected opcode ${code} at ${pc}`);
  }
  throw new Error('fell off the end of the program');
}

const EPERM = SECCOMP_RET_ERRNO | 1;
const ENOSYS = SECCOMP_RET_ERRNO | 38;
const EAFNOSUPPORT = SECCOMP_RET_ERRNO | 97;
// read, write, openat, execve, exit_group, mmap, wait4/futex: what every Python process does.
const ORDINARY: Record<SeccompArch, number[]> = {
  x64: [0, 1, 257, 59, 231, 9, 61, 202],
  arm64: [63, 64, 56, 221, 94, 222, 260, 98],
};

describe('seccompFilter program', () => {
  for (const arch of ['x64', 'arm64'] as const) {
    describe(arch, () => {
      const program = seccompFilter({ arch });
      const nr = (name: string): number => SYSCALL_NUMBERS[name]![arch]!;

      it('checks the arch first and ends every path in a return', () => {
        const insns = decode(program);
        expect(insns[0]).toEqual({ code: 0x20, jt: 0, jf: 0, k: 4 });
        expect(insns[1]).toMatchObject({ code: 0x15, k: AUDIT[arch] });
        expect(insns.at(-1)).toEqual({ code: 0x06, jt: 0, jf: 0, k: SECCOMP_RET_KILL_PROCESS });
        // Jumps land inside the program; a return may only be the last thing on a path.
        insns.forEach((insn, pc) => {
          if (insn.code === 0x06) return;
          expect(pc + 1 + Math.max(insn.jt, insn.jf)).toBeLessThan(insns.length);
        });
      });

      it('kills a syscall made through another ABI', () => {
        const other = arch === 'x64' ? AUDIT.arm64 : AUDIT.x64;
        expect(evaluate(program, { arch: other, nr: 0 })).toBe(SECCOMP_RET_KILL_PROCESS);
        expect(evaluate(program, { arch: 0x40000003 /* i386 */, nr: 0 })).toBe(SECCOMP_RET_KILL_PROCESS);
      });

      it('answers every blocked syscall with EPERM, clone3 with ENOSYS', () => {
        for (const name of BLOCKED_SYSCALLS) {
          const number = SYSCALL_NUMBERS[name]?.[arch];
          if (number === undefined) continue;
          const expected = name === 'clone3' ? ENOSYS : EPERM;
          expect([name, evaluate(program, { arch: AUDIT[arch], nr: number })]).toEqual([name, expected]);
        }
      });

      it('allows ordinary syscalls and clone without CLONE_NEWUSER', () => {
        for (const number of ORDINARY[arch]) {
          expect(evaluate(program, { arch: AUDIT[arch], nr: number })).toBe(SECCOMP_RET_ALLOW);
        }
        const threadFlags = 0x3d0f00; // what glibc's pthread_create passes
        expect(evaluate(program, { arch: AUDIT[arch], nr: nr('clone'), arg0: threadFlags })).toBe(
          SECCOMP_RET_ALLOW,
        );
        expect(evaluate(program, { arch: AUDIT[arch], nr: nr('clone'), arg0: 0x10000000 | 17 })).toBe(EPERM);
      });

      it('refuses inotify and fanotify (a view of other sandboxes and the host through the shared /usr)', () => {
        for (const name of ['inotify_init', 'inotify_init1', 'fanotify_init', 'fanotify_mark']) {
          const number = SYSCALL_NUMBERS[name]?.[arch];
          if (number === undefined) continue;
          expect([name, evaluate(program, { arch: AUDIT[arch], nr: number })]).toEqual([name, EPERM]);
        }
      });

      it('allows unix and IP sockets only, refusing every other family with EAFNOSUPPORT', () => {
        for (const call of ['socket', 'socketpair']) {
          for (const family of Object.values(SOCKET_FAMILIES)) {
            expect(evaluate(program, { arch: AUDIT[arch], nr: nr(call), arg0: family })).toBe(
              SECCOMP_RET_ALLOW,
            );
          }
          // AF_UNSPEC, AF_NETLINK, AF_PACKET, AF_KEY, AF_BLUETOOTH, AF_ALG, AF_VSOCK, AF_XDP, AF_MAX-ish.
          for (const family of [0, 16, 17, 15, 31, 38, 40, 44, 45, 1000]) {
            expect([
              call,
              family,
              evaluate(program, { arch: AUDIT[arch], nr: nr(call), arg0: family }),
            ]).toEqual([call, family, EAFNOSUPPORT]);
          }
        }
      });

      it('refuses prctl(PR_SET_PDEATHSIG) and allows the other prctl options', () => {
        expect(evaluate(program, { arch: AUDIT[arch], nr: nr('prctl'), arg0: 1 })).toBe(EPERM);
        // PR_GET_PDEATHSIG, PR_SET_NAME, PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP
        for (const option of [2, 15, 38, 22]) {
          expect(evaluate(program, { arch: AUDIT[arch], nr: nr('prctl'), arg0: option })).toBe(
            SECCOMP_RET_ALLOW,
          );
        }
      });
    });
  }

  it('refuses x32 syscalls on x86_64', () => {
    const program = seccompFilter({ arch: 'x64' });
    expect(evaluate(program, { arch: AUDIT.x64, nr: 0x40000000 | 39 })).toBe(ENOSYS);
  });

  it('leaves out syscalls an arch lacks and rejects names it does not know', () => {
    const arm = decode(seccompFilter({ arch: 'arm64' }));
    const x64 = decode(seccompFilter({ arch: 'x64' }));
    // x86_64 has iopl, ioperm, modify_ldt, inotify_init and the x32 check on top.
    expect(x64.length - arm.length).toBe(5);
    expect(() => seccompFilter({ blocked: ['ptrace', 'no_such_call'] })).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT' }) as Error,
    );
    const onlyPtrace = seccompFilter({ arch: 'x64', blocked: ['ptrace'] });
    expect(evaluate(onlyPtrace, { arch: AUDIT.x64, nr: 101 })).toBe(EPERM);
    expect(evaluate(onlyPtrace, { arch: AUDIT.x64, nr: 321 })).toBe(SECCOMP_RET_ALLOW);
  });

  // The table is written by hand; where the kernel headers are installed, hold it against them.
  const headers = [
    { arch: 'x64' as const, file: '/usr/include/x86_64-linux-gnu/asm/unistd_64.h' },
    { arch: 'arm64' as const, file: '/usr/include/asm-generic/unistd.h' },
  ];
  for (const { arch, file } of headers) {
    it.skipIf(!existsSync(file))(`matches ${file}`, () => {
      const text = readFileSync(file, 'utf8');
      for (const [name, numbers] of Object.entries(SYSCALL_NUMBERS)) {
        const match = new RegExp(`#define __NR(?:3264)?_${name}\\s+(\\d+)`).exec(text);
        expect([name, numbers[arch]]).toEqual([name, match ? Number(match[1]) : undefined]);
      }
    });
  }
});

const BWRAP = '/usr/bin/bwrap';
const PYTHON = '/usr/bin/python3';
const canRun =
  existsSync(BWRAP) && existsSync(PYTHON) && (process.arch === 'x64' || process.arch === 'arm64');
if (!canRun) console.warn(`seccomp sandbox tests skipped: need ${BWRAP} and ${PYTHON} on x64 or arm64`);

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

const dir = mkdtempSync(join(tmpdir(), 'codecall-seccomp-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs Python in bwrap as uid 65534 (when we are root), the filter on fd 3 from a file or a pipe. */
function sandboxed(code: string, filter: Buffer | null, via: 'file' | 'pipe' = 'file'): Promise<Outcome> {
  const args = ['--unshare-all', '--die-with-parent', '--new-session', '--cap-drop', 'ALL'];
  args.push('--ro-bind', '/usr', '/usr', '--symlink', 'usr/lib', '/lib', '--symlink', 'usr/lib64', '/lib64');
  args.push('--symlink', 'usr/bin', '/bin', '--proc', '/proc', '--dev', '/dev');
  if (filter) args.push('--seccomp', '3');
  args.push(PYTHON, '-c', code);
  let fd: number | undefined;
  if (filter && via === 'file') {
    const file = join(dir, `filter-${Math.random().toString(36).slice(2)}.bpf`);
    writeFileSync(file, filter);
    fd = openSync(file, 'r');
  }
  const root = process.getuid?.() === 0;
  const child = spawn(BWRAP, args, {
    stdio: ['ignore', 'pipe', 'pipe', fd ?? (filter ? 'pipe' : 'ignore')],
    ...(root ? { uid: 65534, gid: 65534 } : {}),
  });
  if (fd !== undefined) closeSync(fd);
  if (filter && via === 'pipe') (child.stdio[3] as Writable).end(filter);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (exitCode) => resolve({ code: exitCode, stdout, stderr }));
  });
}

// Each probe prints [result, errno]; a raw clone child (result 0) leaves at once.
const PROBES = String.raw`
import ctypes, json, os
libc = ctypes.CDLL(None, use_errno=True)
def sc(nr, *args):
    ctypes.set_errno(0)
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) for a in args])
    if r == 0 and nr == NR['clone']: os._exit(0)
    if r > 0 and nr == NR['clone']: os.waitpid(r, 0)
    return [r, ctypes.get_errno()]
out = {}
out['clone_newuser'] = sc(NR['clone'], 0x10000000 | 17, 0, 0, 0, 0)
out['unshare'] = sc(NR['unshare'], 0x10000000)
out['keyctl'] = sc(NR['keyctl'], 0, 0, 0, 0, 0)
out['bpf'] = sc(NR['bpf'], 0, 0, 0)
out['clone3'] = sc(NR['clone3'], 0, 0)
ctypes.set_errno(0)
out['ptrace'] = [libc.ptrace(0, 0, 0, 0), ctypes.get_errno()]
print(json.dumps(out))
`;
const probes = (): string => {
  const names = ['clone', 'unshare', 'keyctl', 'bpf', 'clone3'];
  const arch = process.arch as SeccompArch;
  const table = Object.fromEntries(names.map((name) => [name, SYSCALL_NUMBERS[name]![arch]]));
  return `NR = ${JSON.stringify(table)}\n${PROBES}`;
};

describe.skipIf(!canRun)('seccompFilter under bwrap', () => {
  it('makes the blocked syscalls fail with EPERM (and clone3 with ENOSYS)', async () => {
    const result = await sandboxed(probes(), seccompFilter());
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      clone_newuser: [-1, 1],
      unshare: [-1, 1],
      keyctl: [-1, 1],
      bpf: [-1, 1],
      clone3: [-1, 38],
      ptrace: [-1, 1],
    });
  });

  it('is what makes them fail: without it the same calls succeed or fail otherwise', async () => {
    const result = await sandboxed(probes(), null);
    expect(result.code, result.stderr).toBe(0);
    const out = JSON.parse(result.stdout) as Record<string, [number, number]>;
    // Without the filter the kernel looks at the arguments (EINVAL, EFAULT) or lets the call through.
    for (const name of ['clone_newuser', 'unshare', 'keyctl', 'bpf', 'clone3', 'ptrace']) {
      expect([name, out[name]]).not.toEqual([name, [-1, 1]]);
    }
  });

  it('leaves ordinary work alone: files, fork, threads, subprocess', async () => {
    const code = String.raw`
import os, subprocess, sys, threading
data = open('/usr/lib/os-release').read()
pid = os.fork()
if pid == 0: os._exit(7)
status = os.waitpid(pid, 0)[1]
seen = []
threads = [threading.Thread(target=seen.append, args=(i,)) for i in range(4)]
for t in threads: t.start()
for t in threads: t.join()
rc = subprocess.run(['/usr/bin/true']).returncode
print(len(data) > 0, os.waitstatus_to_exitcode(status), sorted(seen), rc, os.getuid())
`;
    const result = await sandboxed(code, seccompFilter(), 'pipe');
    expect(result.code, result.stderr).toBe(0);
    const uid = process.getuid?.() === 0 ? 65534 : process.getuid?.();
    expect(result.stdout.trim()).toBe(`True 7 [0, 1, 2, 3] 0 ${uid}`);
  });

  it('kills the process when the filter is for another arch', async () => {
    const other: SeccompArch = process.arch === 'x64' ? 'arm64' : 'x64';
    const result = await sandboxed('print("ran")', seccompFilter({ arch: other }));
    // bwrap reports a child killed by SIGSYS (31) as 128 + 31; Python never gets to run.
    expect(result.code).toBe(128 + 31);
    expect(result.stdout).toBe('');
  });
});
