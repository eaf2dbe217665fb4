// A fork server (ADR 0061, amended 2026-12-07) serves execution after execution from one sandbox: nothing one
// execution does may reach the next. Each case runs a quiet program or a hostile one, then the same observer, on
// one driver whose single pooled sandbox is reused throughout (checked by bwrap's pid), and asserts that the
// observer sees the same thing after both: module state, builtins, the environment, files in /tmp, /dev/shm and
// the workspace, the seeded files, open fds, background threads and processes, SysV objects, pids, inode numbers,
// loopback counters, and what the sandbox's pid 1 shows.
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPythonDriver, probePython } from '../../src/sandbox/index.ts';
import type { PythonDriver } from '../../src/sandbox/index.ts';
import type { ExecutionResult } from '../../src/spec/index.ts';

const probe = await probePython();

/** bwrap processes this host process started (the driver's sandboxes). */
function sandboxes(): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === process.pid && comm === 'bwrap') found.push(Number(entry));
    } catch {
      // Gone.
    }
  }
  return found;
}

const HOSTILE = String.raw`import builtins, ctypes, math, os, socket, sys, threading
sys.modules['json'] = 'poisoned'
math.pi = 3
os.environ['POISON'] = '1'
for path in ('/tmp/poison', '/workspace/poison', '/dev/shm/poison'):
    with open(path, 'w') as f:
        f.write('left behind')
held = os.open('/tmp/held', os.O_CREAT | os.O_RDWR)
with open('/dev/urandom', 'ab') as f:
    f.write(b'x' * 4096)
def keep_writing(path):
    import select
    while True:
        with open(path, 'a') as f:
            f.write('x')
        select.select([], [], [], 0.005)
threading.Thread(target=keep_writing, args=('/tmp/thread',), daemon=True).start()
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        keep_writing('/tmp/daemon')
    os._exit(0)
libc = ctypes.CDLL(None)
libc.shmget(0x1234, 4096, 0o1666)
libc.msgget(0x1234, 0o1666)
for _ in range(100):
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
for i in range(50):
    open('/tmp/f%d' % i, 'w').close()
    os.unlink('/tmp/f%d' % i)
server = socket.socket()
server.bind(('127.0.0.1', 0))
server.listen()
client = socket.create_connection(server.getsockname())
client.sendall(b'x' * 100000)
builtins.abs = lambda x: 42
builtins.print = None
'hostile'`;

const QUIET = `'quiet'`;

const OBSERVER = String.raw`import builtins, math, os, select, sys, threading
select.select([], [], [], 0.05)
child = os.fork()
if child == 0:
    os._exit(0)
os.waitpid(child, 0)
fd = os.open('/tmp/probe', os.O_CREAT | os.O_WRONLY)
ino = os.fstat(fd).st_ino
os.close(fd)
os.unlink('/tmp/probe')
stat = open('/proc/1/stat').read().rsplit(')', 1)[1].split()
{
    'json': type(sys.modules.get('json')).__name__,
    'pi': math.pi,
    'abs': builtins.abs(-2),
    'print': builtins.print is not None,
    'env': sorted(os.environ),
    'tmp': sorted(os.listdir('/tmp')),
    'workspace': sorted(os.listdir('/workspace')),
    'shm': sorted(os.listdir('/dev/shm')),
    'urandom': os.stat('/dev/urandom').st_size,
    'fds': sorted(os.listdir('/proc/self/fd')),
    'processes': sorted(p for p in os.listdir('/proc') if p.isdigit()),
    'threads': threading.active_count(),
    'pid': [os.getpid(), os.getppid(), child],
    'inode': ino,
    'sysv': [len(open('/proc/sysvipc/' + k).read().splitlines()) for k in ('shm', 'msg', 'sem')],
    'loopback': [line.split()[1:3] for line in open('/proc/net/dev') if 'lo:' in line],
    'pid 1 is itself': os.readlink('/proc/self') == '1' and stat[1] == '0',
}`;

describe.skipIf(!probe.ok)(
  `python fork server: an execution cannot affect the next${probe.ok ? '' : ` (skipped: ${probe.reason})`}`,
  () => {
    let driver: PythonDriver;
    beforeAll(async () => {
      driver = createPythonDriver({ warm: 1, forkServer: true, ...(probe.ok ? { probe } : {}) });
      await driver.ready();
    });
    afterAll(() => driver.close());

    const run = async (code: string): Promise<ExecutionResult> =>
      driver.execute({
        code,
        language: 'python',
        tools: [],
        host: { call: () => Promise.resolve({ ok: true, value: null }) },
      });
    const value = async (code: string): Promise<unknown> => {
      const r = await run(code);
      if (r.status !== 'succeeded') throw new Error(`${r.error.code}: ${r.error.message}`);
      return r.value;
    };
    /** Waits for the pooled sandbox to be back (the driver recycles it after the result). */
    const settle = async () => {
      for (let i = 0; i < 200 && sandboxes().length !== 1; i++) await new Promise((r) => setTimeout(r, 10));
      await new Promise((r) => setTimeout(r, 50));
    };

    it('the observer sees the same after a hostile execution as after a quiet one, in the same sandbox', async () => {
      await settle();
      const [sandbox] = sandboxes();
      expect(await value(QUIET)).toBe('quiet');
      await settle();
      const afterQuiet = await value(OBSERVER);
      await settle();
      expect(await value(HOSTILE)).toBe('hostile');
      await settle();
      const afterHostile = await value(OBSERVER);
      await settle();
      // The same sandbox served all four: the fork server was reused, not replaced.
      expect(sandboxes()).toEqual([sandbox]);
      expect(afterHostile).toEqual(afterQuiet);
      expect(afterQuiet).toMatchObject({
        json: 'NoneType',
        pi: Math.PI,
        abs: 2,
        print: true,
        pid: [1, 0, 2],
        sysv: [1, 1, 1],
        threads: 1,
      });
      expect((afterQuiet as { tmp: string[] }).tmp.filter((n) => !n.startsWith('fontlist'))).toEqual([]);
    });

    it('pid 1 of the sandbox (the server) is out of the execution’s reach', async () => {
      const seen = await value(String.raw`import os
out = {}
out['kill all'] = 'sent'
try:
    os.kill(-1, 9)
except OSError as e:
    out['kill all'] = e.errno
out['pid 1 is itself'] = os.readlink('/proc/self') == '1'
out['processes'] = sorted(p for p in os.listdir('/proc') if p.isdigit())
out`);
      // ESRCH: there is no process it could signal (the server is in no namespace of its).
      expect(seen).toEqual({ 'kill all': 3, 'pid 1 is itself': true, processes: ['1'] });
      await settle();
      expect(await value('1 + 1')).toBe(2);
    });

    it('an execution that crashes, or runs out of time, ends its sandbox; the next gets a good one', async () => {
      const crashed = await run('import os\nos._exit(3)');
      expect(crashed.status === 'failed' && crashed.error.code).toBe('SANDBOX_CRASHED');
      const late = await driver.execute({
        code: 'while True: pass',
        language: 'python',
        tools: [],
        limits: { timeoutMs: 300 },
        host: { call: () => Promise.resolve({ ok: true, value: null }) },
      });
      expect(late.status === 'failed' && late.error.code).toBe('TIMEOUT');
      await settle();
      const after = (await value(OBSERVER)) as { pid: number[]; tmp: string[] };
      expect(after.pid).toEqual([1, 0, 2]);
      expect(after.tmp.filter((n) => !n.startsWith('fontlist'))).toEqual([]);
    });
  },
);

// A bwrap that drops the capabilities the server asks for (as a kernel or policy refusing them would): the server
// cannot make an execution's namespaces, and the pool goes back to a fresh sandbox per execution.
describe.skipIf(!probe.ok)(
  `python fork server refused: fresh sandboxes instead${probe.ok ? '' : ` (skipped: ${probe.reason})`}`,
  () => {
    let dir: string;
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), 'codecall-nocaps-'));
      chmodSync(dir, 0o755);
      const wrapper = join(dir, 'bwrap');
      writeFileSync(
        wrapper,
        `#!/bin/sh
n=$#
while [ $n -gt 0 ]; do
  a=$1; shift; n=$((n - 1))
  if [ "$a" = --cap-add ]; then shift; n=$((n - 1)); continue; fi
  set -- "$@" "$a"
done
exec ${probe.ok ? probe.bwrapPath : 'bwrap'} "$@"
`,
      );
      chmodSync(wrapper, 0o755);
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('executions still run, and the driver says why it has no fork servers', async () => {
      if (!probe.ok) return;
      const driver = createPythonDriver({
        warm: 1,
        forkServer: true,
        probe: { ...probe, bwrapPath: join(dir, 'bwrap') },
      });
      try {
        await driver.ready();
        for (let i = 0; i < 2; i++) {
          const r = await driver.execute({
            code: 'import os\nos.getpid()',
            language: 'python',
            tools: [],
            host: { call: () => Promise.resolve({ ok: true, value: null }) },
          });
          expect(r.status === 'succeeded' && r.value).toBe(1);
        }
        expect(driver.forkServerFailure).toMatch(/unshare|Operation not permitted/);
      } finally {
        await driver.close();
      }
    });
  },
);
