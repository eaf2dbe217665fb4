import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createSocket } from 'node:dgram';
import type { Socket as UdpSocket } from 'node:dgram';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statfsSync,
  writeFileSync,
} from 'node:fs';
import { connect, createServer } from 'node:net';
import type { AddressInfo, Server } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import type { ExecutionLimits, ExecutionResult, SandboxPolicy } from '../../src/spec/index.ts';
import { detectCgroups } from '../../src/sandbox/python/cgroups.ts';
import { echoTool, hangTool, sleepTool } from './fixtures.ts';
import type { Group, SuiteOptions } from './harness.ts';
import {
  defineGroup,
  describeResult,
  expectFailed,
  expectSucceeded,
  HEALTH,
  NEIGHBOUR,
  timed,
  waitFor,
} from './harness.ts';
import { ESCAPE_MARKER, expectContained, sandboxRoot, useHostChecks } from './escape-support.ts';

/**
 * Python programs that attack the sandbox itself (bubblewrap, rlimits, the host's watchdog), not the value
 * bridge: the OS is the boundary, so each case checks the host from the outside: canary files the sandbox could
 * delete if it saw them, servers on the host's loopback, a host process of the sandbox's own uid, the host's
 * environment, its /tmp and its process table. `os`, `subprocess` and `ctypes` are allowed: reaching them is not
 * an escape, leaving the sandbox with them would be.
 */

const MiB = 1024 * 1024;
/** The uid the driver runs sandboxes as when the tests run as root (python-process.ts). */
const SANDBOX_UID = 65534;
const ROOT = process.getuid?.() === 0;
/** In the host's environment while the sandboxes start: the program looks for it everywhere it can read. */
const SECRET = `codecall-escape-secret-${randomUUID()}`;
/** Processes the hostile programs start name themselves this (prctl PR_SET_NAME); the host looks for them. */
const TAG = 'ccescape';

/** Whether an attempt worked (and what it returned), or the exception it raised and its errno. */
interface Attempt {
  ok: boolean;
  value?: unknown;
  error?: string;
  errno?: number | null;
}
type Report = Record<string, Attempt>;

/** Prepended to the programs that report: `attempt(name, fn)` records each try, `R` is the result. */
const PRELUDE = `import os, sys, errno
R = {}
def attempt(name, fn):
    try:
        v = fn()
        R[name] = {'ok': True, 'value': v if isinstance(v, (int, str, bool, list, type(None))) else repr(v)}
    except BaseException as e:
        R[name] = {'ok': False, 'error': type(e).__name__, 'errno': getattr(e, 'errno', None)}
def tag(name):
    import ctypes
    ctypes.CDLL(None).prctl(15, name.encode(), 0, 0, 0)
def hold(seconds=3600):
    # A real wait: time.sleep goes to the host (the journaled clock), select does not.
    import select
    select.select([], [], [], seconds)
def workspace_host_path():
    for line in open('/proc/self/mountinfo'):
        f = line.split()
        if f[4] == '/workspace':
            return f[3]
`;

/** A Python literal for a string or number (JSON's are Python's). */
const py = (v: string | number): string => JSON.stringify(v);

/** The host as the sandbox must leave it. */
interface HostWorld {
  canaryDir: string;
  canaryFile: string;
  canaryText: string;
  /** Under /usr (the sandbox sees it, read-only), owned by the sandbox's uid: only the mount protects it. */
  usrCanary: string | null;
  tcp: Server;
  tcpPort: number;
  udp: UdpSocket;
  udpPort: number;
  abstractName: string;
  abstract: Server;
  unixPath: string;
  unix: Server;
  /** Connections and datagrams the host's servers received: from a sandbox, none may arrive. */
  hits: { count: number };
  /** A host process running as the sandbox's uid (when root): the one a signal could reach if any could. */
  victim: ChildProcess;
}

function hostPidsNamed(name: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === name) found.push(Number(entry));
    } catch {
      // Gone.
    }
  }
  return found;
}

function listen(server: Server, where: number | string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    if (typeof where === 'number') server.listen(where, '127.0.0.1', resolve);
    else server.listen(where, resolve);
  });
}

function asOwner(path: string): void {
  if (ROOT) chownSync(path, SANDBOX_UID, SANDBOX_UID);
}

async function setUpHost(): Promise<HostWorld> {
  const canaryDir = mkdtempSync(join(tmpdir(), 'codecall-escape-canary-'));
  const canaryFile = join(canaryDir, 'canary.txt');
  const canaryText = `canary ${randomUUID()}`;
  writeFileSync(canaryFile, canaryText);
  // Writable by the sandbox's uid: if the sandbox could see it, it could delete it.
  chmodSync(canaryDir, 0o777);
  chmodSync(canaryFile, 0o666);
  asOwner(canaryDir);
  asOwner(canaryFile);
  let usrCanary: string | null = null;
  try {
    const dir = mkdtempSync('/usr/local/share/codecall-escape-canary-');
    writeFileSync(join(dir, 'canary.txt'), canaryText);
    chmodSync(dir, 0o777);
    asOwner(dir);
    asOwner(join(dir, 'canary.txt'));
    usrCanary = dir;
  } catch {
    // Not root: /usr/local/share is not ours; the host-only canary still stands.
  }
  const hits = { count: 0 };
  const count = () => {
    hits.count += 1;
  };
  const tcp = createServer((socket) => (count(), socket.destroy()));
  await listen(tcp, 0);
  const udp = createSocket('udp4');
  udp.on('message', count);
  await new Promise<void>((resolve) => udp.bind(0, '127.0.0.1', resolve));
  const abstractName = `codecall-escape-${randomUUID()}`;
  const abstract = createServer((socket) => (count(), socket.destroy()));
  await listen(abstract, `\0${abstractName}`);
  const unixPath = join(canaryDir, 'host.sock');
  const unix = createServer((socket) => (count(), socket.destroy()));
  await listen(unix, unixPath);
  chmodSync(unixPath, 0o777);
  const victim = spawn('sleep', ['3600'], {
    stdio: 'ignore',
    ...(ROOT ? { uid: SANDBOX_UID, gid: SANDBOX_UID } : {}),
  });
  // The detectors work: one connection (or datagram) from the host itself to each is counted.
  const probe = createSocket('udp4');
  probe.send('probe', udp.address().port, '127.0.0.1', () => probe.close());
  for (const to of [
    { port: (tcp.address() as AddressInfo).port, host: '127.0.0.1' },
    { path: `\0${abstractName}` },
    { path: unixPath },
  ]) {
    connect(to)
      .on('error', () => undefined)
      .end();
  }
  await waitFor(() => hits.count === 4, 5_000);
  hits.count = 0;
  return {
    canaryDir,
    canaryFile,
    canaryText,
    usrCanary,
    tcp,
    tcpPort: (tcp.address() as AddressInfo).port,
    udp,
    udpPort: udp.address().port,
    abstractName,
    abstract,
    unixPath,
    unix,
    hits,
    victim,
  };
}

function victimAlive(world: HostWorld): boolean {
  const pid = world.victim.pid;
  if (pid === undefined || world.victim.exitCode !== null || world.victim.signalCode !== null) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function expectHostUntouched(world: HostWorld): void {
  expect(readFileSync(world.canaryFile, 'utf8'), 'host canary file').toBe(world.canaryText);
  expect(readdirSync(world.canaryDir).sort(), 'host canary dir').toEqual(['canary.txt', 'host.sock']);
  if (world.usrCanary) {
    expect(readFileSync(join(world.usrCanary, 'canary.txt'), 'utf8'), 'canary under /usr').toBe(
      world.canaryText,
    );
  }
  expect(existsSync('/usr/bin/python3'), '/usr/bin/python3').toBe(true);
  expect(world.hits.count, 'connections and datagrams to the host servers').toBe(0);
  expect(victimAlive(world), `host process ${world.victim.pid} of the sandbox's uid`).toBe(true);
}

async function tearDownHost(world: HostWorld | undefined): Promise<void> {
  if (!world) return;
  world.victim.kill('SIGKILL');
  await Promise.all(
    [world.tcp, world.abstract, world.unix].map((s) => new Promise((r) => s.close(() => r(undefined)))),
  );
  world.udp.close();
  rmSync(world.canaryDir, { recursive: true, force: true });
  if (world.usrCanary) rmSync(world.usrCanary, { recursive: true, force: true });
}

/**
 * The host path of a workspace whose mount source the sandbox saw (relative to its filesystem's root), or null
 * when the workspace is a tmpfs of the sandbox's own (source `/`): then nothing of it is on the host's disk.
 */
function onHost(source: string): string | null {
  if (source === '/') return null;
  expect(source).toMatch(/codecall-py-/);
  return join(tmpdir(), basename(source));
}

function attempted(report: Report, name: string): Attempt {
  const a = report[name];
  expect(a, `attempt "${name}" missing from ${JSON.stringify(report).slice(0, 500)}`).toBeDefined();
  return a as Attempt;
}

/** The attempt failed with one of `errors` (an exception name) and, when given, one of `errnos`. */
function expectDenied(
  report: Report,
  name: string,
  errors: readonly string[],
  errnos?: readonly number[],
): void {
  const a = attempted(report, name);
  expect(a.ok, `${name} should fail: ${JSON.stringify(a)}`).toBe(false);
  expect(errors, `${name}: ${JSON.stringify(a)}`).toContain(a.error);
  if (errnos) expect(errnos, `${name}: ${JSON.stringify(a)}`).toContain(a.errno);
}

function expectWorked(report: Report, name: string): unknown {
  const a = attempted(report, name);
  expect(a.ok, `${name} should work: ${JSON.stringify(a)}`).toBe(true);
  return a.value;
}

const E = {
  PERM: 1,
  NOENT: 2,
  SRCH: 3,
  ACCES: 13,
  XDEV: 18,
  ROFS: 30,
  NOSPC: 28,
  AFNOSUPPORT: 97,
  NETUNREACH: 101,
} as const;

/** Runs a program built on PRELUDE and returns its report (it must succeed). */
/**
 * The boundary is tested with processes allowed: the sandbox must hold against the most a task may be given (a
 * task without allow_subprocesses cannot start processes at all, which policy tests cover).
 */
const OPEN: SandboxPolicy = { allowSubprocesses: true };

async function runReport(
  g: Group,
  body: string,
  limits: Partial<ExecutionLimits> = {},
  policy: SandboxPolicy = OPEN,
): Promise<Report> {
  const { failed, result, value } = await expectContained(
    g,
    { code: `${PRELUDE}\n${body}\nR`, language: 'python' },
    { limits: { timeoutMs: 10_000, ...limits }, policy },
  );
  expect(failed, describeResult(result)).toBe(false);
  return value as Report;
}

async function runHostile(
  g: Group,
  body: string,
  limits: Partial<ExecutionLimits> = {},
): Promise<{ result: ExecutionResult; ms: number }> {
  const { value, ms } = await timed(() =>
    expectContained(g, { code: `${PRELUDE}\n${body}`, language: 'python' }, { limits, policy: OPEN }),
  );
  return { result: value.result, ms };
}

/** Runs `fn`, measuring the longest the host's event loop went without turning meanwhile. */
async function withLag<T>(fn: () => Promise<T>): Promise<{ value: T; lag: number }> {
  let lag = 0;
  let last = performance.now();
  const interval = setInterval(() => {
    const now = performance.now();
    lag = Math.max(lag, now - last);
    last = now;
  }, 10);
  try {
    const value = await fn();
    return { value, lag: Math.max(lag, performance.now() - last) };
  } finally {
    clearInterval(interval);
  }
}

/** Until none is left (processes of a killed sandbox take a moment to be reaped). */
async function expectNoneNamed(name: string): Promise<void> {
  await waitFor(() => hostPidsNamed(name).length === 0, 5_000).catch(() => undefined);
  expect(hostPidsNamed(name), `host processes named ${name}`).toEqual([]);
}

export function registerPythonEscapeCases(options: SuiteOptions): void {
  // These attack CPython's sandbox (bubblewrap, rlimits): they have no meaning for another language's driver.
  if (options.language !== 'python') return;
  process.env.CODECALL_ESCAPE_SECRET = SECRET;

  defineGroup(options, 'escape: python sandbox (the OS boundary)', (g) => {
    useHostChecks(g);
    let world: HostWorld | undefined;
    const host = (): HostWorld => {
      if (!world) throw new Error('the host world is not set up');
      return world;
    };
    beforeAll(async () => {
      world = await setUpHost();
    });
    afterEach(() => expectHostUntouched(host()));
    afterAll(async () => {
      await tearDownHost(world);
    });

    // ---- the filesystem ------------------------------------------------------------------------------------

    g.test(
      'os.system("rm -rf /") and shutil.rmtree("/usr") remove nothing of the host',
      async () => {
        const usr = host().usrCanary;
        const r = await runReport(
          g,
          `import shutil
attempt('rm', lambda: os.system('rm -rf --no-preserve-root / 2>/dev/null'))
attempt('rmtree usr', lambda: shutil.rmtree('/usr'))
attempt('python3', lambda: os.path.exists('/usr/bin/python3'))
attempt('usr canary', lambda: ${usr ? `os.listdir(${py(usr)})` : "'none'"})`,
          { timeoutMs: 30_000 },
        );
        expect(expectWorked(r, 'rm'), 'rm -rf / exits non-zero (read-only mounts)').not.toBe(0);
        expectDenied(r, 'rmtree usr', ['OSError'], [E.ROFS]);
        expect(expectWorked(r, 'python3')).toBe(true);
        // The canary under /usr is writable by the sandbox's uid: only the read-only mount kept it.
        if (usr) expect(expectWorked(r, 'usr canary')).toEqual(['canary.txt']);
      },
      60_000,
    );

    g.test('writes outside the workspace fail; /tmp is private to one execution', async () => {
      const w = host();
      const privateName = `/tmp/codecall-escape-private-${randomUUID()}`;
      const targets: Record<string, string> = {
        root: '/escaped',
        etc: '/etc/escaped',
        usr: '/usr/escaped',
        bin: '/usr/bin/escaped',
        dev: '/dev/escaped',
        proc: '/proc/escaped',
        'host canary dir': join(w.canaryDir, 'escaped'),
        ...(w.usrCanary ? { 'usr canary': join(w.usrCanary, 'escaped') } : {}),
      };
      const writes = Object.entries(targets)
        .map(([name, path]) => `attempt(${py(name)}, lambda: open(${py(path)}, 'w').write('x'))`)
        .join('\n');
      const r = await runReport(
        g,
        `${writes}
attempt('chmod python3', lambda: os.chmod('/usr/bin/python3', 0o777))
attempt('core_pattern', lambda: open('/proc/sys/kernel/core_pattern', 'w').write('|/tmp/x'))
attempt('mkdir /usr', lambda: os.mkdir('/usr/escaped'))
attempt('tmp', lambda: open(${py(privateName)}, 'w').write('x'))
attempt('workspace', lambda: open('/workspace/file', 'w').write('x'))
attempt('dev/null', lambda: open('/dev/null', 'w').write('x'))`,
      );
      for (const name of ['root', 'etc', 'usr', 'bin', 'dev', 'mkdir /usr', 'chmod python3']) {
        expectDenied(r, name, ['OSError'], [E.ROFS]);
      }
      if (w.usrCanary) expectDenied(r, 'usr canary', ['OSError'], [E.ROFS]);
      expectDenied(r, 'proc', ['FileNotFoundError', 'PermissionError', 'OSError']);
      expectDenied(r, 'core_pattern', ['PermissionError', 'OSError'], [E.ACCES, E.ROFS]);
      // The host's canary directory is not there at all.
      expectDenied(r, 'host canary dir', ['FileNotFoundError'], [E.NOENT]);
      expect(expectWorked(r, 'tmp')).toBe(1);
      expect(expectWorked(r, 'workspace')).toBe(1);
      expect(expectWorked(r, 'dev/null')).toBe(1);
      expect(existsSync(privateName), "the sandbox's /tmp is not the host's").toBe(false);
      const next = await runReport(g, `attempt('tmp', lambda: os.path.exists(${py(privateName)}))`);
      expect(expectWorked(next, 'tmp'), 'a later execution does not see it').toBe(false);
    });

    g.test(
      "links in the workspace to host paths do not lead the host's cleanup or watchdog outside it",
      async () => {
        const w = host();
        const r = await runReport(
          g,
          `attempt('symlink file', lambda: os.symlink(${py(w.canaryFile)}, 'to-canary'))
attempt('symlink dir', lambda: os.symlink(${py(w.canaryDir)}, 'to-canary-dir'))
attempt('symlink root', lambda: os.symlink('/', 'to-root'))
attempt('hardlink usr', lambda: os.link('/usr/bin/python3', 'python3'))
attempt('read through', lambda: open('to-canary').read())
attempt('workspace', lambda: workspace_host_path())
hold(0.3)`,
        );
        expectWorked(r, 'symlink file');
        // Inside, the link leads nowhere: the host path is not in the sandbox.
        expectDenied(r, 'read through', ['FileNotFoundError'], [E.NOENT]);
        expectDenied(r, 'hardlink usr', ['OSError', 'PermissionError'], [E.XDEV, E.PERM]);
        const workspace = onHost(expectWorked(r, 'workspace') as string);
        // The host removes the workspace without following the links (the canary is checked after each case).
        if (workspace) await waitFor(() => !existsSync(workspace), 5_000);
      },
    );

    g.test("a directory tree deeper than PATH_MAX is still removed from the host's disk", async () => {
      const { result } = await runHostile(
        g,
        `print(workspace_host_path())
for i in range(1200):
    os.mkdir('d' * 10)
    os.chdir('d' * 10)
open('leaf', 'w').write('x')
'deep'`,
      );
      // The watchdog may end it first (it cannot read so deep a path either): either way, nothing is left.
      if (result.status === 'failed') expectFailed(result, 'FILE_LIMIT');
      const workspace = onHost(result.logs[0]?.message ?? '');
      if (workspace) await waitFor(() => !existsSync(workspace), 10_000);
    });

    // ---- reading the host ----------------------------------------------------------------------------------

    g.test('/etc/shadow, /etc/passwd, /root and /home are not there', async () => {
      const r = await runReport(
        g,
        `attempt('shadow', lambda: open('/etc/shadow').read())
attempt('passwd', lambda: open('/etc/passwd').read())
attempt('root', lambda: os.listdir('/root'))
attempt('home', lambda: os.listdir('/home'))
attempt('etc', lambda: sorted(os.listdir('/etc')))
attempt('ssh', lambda: os.listdir('/etc/ssh'))`,
      );
      for (const name of ['shadow', 'passwd', 'root', 'home', 'ssh']) {
        expectDenied(r, name, ['FileNotFoundError'], [E.NOENT]);
      }
      for (const entry of expectWorked(r, 'etc') as string[]) {
        expect(['alternatives', 'ld.so.cache', 'localtime', 'mime.types', 'matplotlibrc']).toContain(entry);
      }
    });

    g.test(
      "the host's processes are not visible: the sandbox's own pids only, no host environment or command line",
      async () => {
        const w = host();
        const r = await runReport(
          g,
          `pids = sorted(int(p) for p in os.listdir('/proc') if p.isdigit())
attempt('pids', lambda: pids)
attempt('host pid', lambda: open('/proc/${process.pid}/cmdline').read())
attempt('victim', lambda: open('/proc/${w.victim.pid}/environ').read())
attempt('host root via proc', lambda: os.listdir('/proc/1/root/root'))
def leaks():
    found = []
    for p in pids:
        for what in ('environ', 'cmdline'):
            try:
                if ${py(SECRET)} in open('/proc/%d/%s' % (p, what), errors='replace').read():
                    found.append('%d/%s' % (p, what))
            except OSError:
                pass
    return found
attempt('secret', leaks)
attempt('own environ', lambda: ${py(SECRET)} in repr(dict(os.environ)))
attempt('environ of 1', lambda: open('/proc/1/environ').read())`,
        );
        const pids = expectWorked(r, 'pids') as number[];
        // The interpreter (pid 1) and what it started, in the sandbox's own pid namespace.
        expect(pids.length).toBeLessThanOrEqual(4);
        for (const pid of pids) expect(pid).toBeLessThan(100);
        expect(pids).not.toContain(process.pid);
        expectDenied(r, 'host pid', ['FileNotFoundError', 'ProcessLookupError'], [E.NOENT, E.SRCH]);
        expectDenied(r, 'victim', ['FileNotFoundError', 'ProcessLookupError'], [E.NOENT, E.SRCH]);
        expectDenied(r, 'host root via proc', ['FileNotFoundError'], [E.NOENT]);
        // bwrap used to keep the host's environment, readable at /proc/1/environ (fixed in python-process.ts).
        expect(expectWorked(r, 'secret'), "the host's environment").toEqual([]);
        expect(expectWorked(r, 'own environ')).toBe(false);
        // pid 1 is the interpreter itself: the sandbox's environment, nothing of the host's.
        expect(expectWorked(r, 'environ of 1')).toMatch(/^PYTHONHASHSEED=0\0/);
      },
    );

    // ---- processes -------------------------------------------------------------------------------------------

    g.test('subprocess.run runs inside the sandbox only', async () => {
      const w = host();
      const r = await runReport(
        g,
        `import subprocess
def run(*args):
    p = subprocess.run(list(args), capture_output=True, text=True)
    return [p.returncode, p.stdout.strip()[:2000]]
attempt('id', lambda: run('id', '-u'))
attempt('ps', lambda: run('sh', '-c', 'ls /proc | grep -c "^[0-9]"'))
attempt('env', lambda: run('sh', '-c', 'cat /proc/1/environ; env'))
attempt('kill victim', lambda: run('kill', '-9', ${py(String(w.victim.pid))}))
attempt('kill host', lambda: run('kill', '-9', ${py(String(process.pid))}))
attempt('connect', lambda: run(sys.executable, '-c', 'import socket; socket.create_connection(("127.0.0.1", ${w.tcpPort}), 2)'))
attempt('shell rm', lambda: run('sh', '-c', 'rm -rf ${w.canaryDir} /usr/bin/python3; echo $?'))
attempt('sudo', lambda: run('sh', '-c', 'command -v sudo su mount || true'))`,
      );
      const [idCode, uid] = expectWorked(r, 'id') as [number, string];
      expect(idCode).toBe(0);
      expect(uid).not.toBe('0');
      const [, procs] = expectWorked(r, 'ps') as [number, string];
      expect(Number(procs)).toBeLessThan(10);
      const [, env] = expectWorked(r, 'env') as [number, string];
      expect(env).not.toContain(SECRET);
      expect((expectWorked(r, 'kill victim') as [number])[0]).not.toBe(0);
      expect((expectWorked(r, 'kill host') as [number])[0]).not.toBe(0);
      expect((expectWorked(r, 'connect') as [number])[0]).not.toBe(0);
      expect((expectWorked(r, 'shell rm') as [number, string])[1]).not.toBe('0');
    });

    g.test('a daemon the program starts (new session, double fork) dies with the execution', async () => {
      const name = `${TAG}-daemon`;
      const r = await runReport(
        g,
        `import subprocess
child = ('import ctypes, os, select\\n'
         'if os.fork(): os._exit(0)\\n'
         'os.setsid()\\n'
         'ctypes.CDLL(None).prctl(15, b${py(name)}, 0, 0, 0)\\n'
         'select.select([], [], [], 3600)\\n')
subprocess.Popen([sys.executable, '-c', child], start_new_session=True,
                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).wait()
hold(0.3)
attempt('running', lambda: len([p for p in os.listdir('/proc') if p.isdigit() and open('/proc/%s/comm' % p).read().strip() == ${py(name)}]))`,
      );
      expect(expectWorked(r, 'running'), 'the daemon ran inside').toBe(1);
      await expectNoneNamed(name);
    });

    g.test(
      'ctypes: libc calls (kill, ptrace, setuid, mount, chroot, unshare) cannot reach the host',
      async () => {
        const w = host();
        const r = await runReport(
          g,
          `import ctypes
libc = ctypes.CDLL(None, use_errno=True)
def c(fn, *args):
    ctypes.set_errno(0)
    return [fn(*args), ctypes.get_errno()]
attempt('kill host', lambda: c(libc.syscall, 62, ${process.pid}, 9))
attempt('kill victim', lambda: c(libc.kill, ${w.victim.pid}, 9))
attempt('ptrace host', lambda: c(libc.syscall, 101, 16, ${process.pid}, 0, 0))
attempt('ptrace victim', lambda: c(libc.ptrace, 16, ${w.victim.pid}, 0, 0))
attempt('setuid 0', lambda: c(libc.setuid, 0))
attempt('mount', lambda: c(libc.mount, b'none', b'/tmp', b'tmpfs', 0, None))
attempt('chroot', lambda: c(libc.chroot, b'/tmp'))
attempt('unshare user', lambda: c(libc.unshare, 0x10000000))
attempt('unshare mount', lambda: c(libc.unshare, 0x00020000))
attempt('setns', lambda: c(libc.setns, os.open('/proc/1/ns/net', os.O_RDONLY), 0))
attempt('getpid', lambda: c(libc.getpid))`,
        );
        const failed = (name: string, errnos: readonly number[]) => {
          const [ret, err] = expectWorked(r, name) as [number, number];
          expect(ret, name).toBe(-1);
          expect(errnos, `${name}: errno ${err}`).toContain(err);
        };
        failed('kill host', [E.SRCH]);
        failed('kill victim', [E.SRCH]);
        // ESRCH (no such process in the sandbox's pid namespace), or EPERM from the seccomp filter first.
        failed('ptrace host', [E.SRCH, E.PERM]);
        failed('ptrace victim', [E.SRCH, E.PERM]);
        failed('setuid 0', [E.PERM, 22]);
        failed('mount', [E.PERM]);
        failed('chroot', [E.PERM]);
        // --disable-userns: no nested user namespace (ENOSPC: the count is used up; EPERM on some kernels).
        failed('unshare user', [E.NOSPC, E.PERM]);
        failed('unshare mount', [E.PERM]);
        failed('setns', [E.PERM, 22]);
        expect((expectWorked(r, 'getpid') as number[])[0], 'its own pid namespace').toBeLessThan(100);
      },
    );

    g.test('no nested user namespaces: unshare -Ur cannot make the program root anywhere', async () => {
      const r = await runReport(
        g,
        `import subprocess
p = subprocess.run(['unshare', '-Urm', 'sh', '-c', 'id -u; mount -t tmpfs none /tmp && echo mounted'],
                   capture_output=True, text=True)
attempt('unshare', lambda: [p.returncode, p.stdout])`,
      );
      const [code, out] = expectWorked(r, 'unshare') as [number, string];
      expect(code).not.toBe(0);
      expect(out).not.toContain('mounted');
    });

    g.test('ctypes: a segfault is SANDBOX_CRASHED, and the next execution runs', async () => {
      const { result } = await runHostile(g, 'import ctypes\nctypes.string_at(0)');
      expectFailed(result, 'SANDBOX_CRASHED');
    });

    g.test(
      "signals: kill(1), kill(<host pid>) and kill(<host process of the sandbox's uid>) reach nothing",
      async () => {
        const w = host();
        const r = await runReport(
          g,
          `import signal
attempt('kill 1', lambda: os.kill(1, signal.SIGKILL))
attempt('kill host', lambda: os.kill(${process.pid}, signal.SIGKILL))
attempt('kill victim', lambda: os.kill(${w.victim.pid}, signal.SIGKILL))
attempt('killpg host', lambda: os.killpg(${process.pid}, signal.SIGKILL))
attempt('pidfd host', lambda: os.pidfd_open(${process.pid}))
attempt('alive', lambda: os.getpid())`,
        );
        // Init of a pid namespace ignores SIGKILL from inside it.
        expectWorked(r, 'kill 1');
        for (const name of ['kill host', 'kill victim', 'killpg host', 'pidfd host']) {
          expectDenied(r, name, ['ProcessLookupError'], [E.SRCH]);
        }
        expectWorked(r, 'alive');
      },
    );

    g.test(
      'kill(-1, SIGKILL) ends only its own sandbox: a concurrent execution and a host process of its uid live on',
      async () => {
        const tools = [sleepTool()];
        const neighbour = g.run({ code: NEIGHBOUR.python ?? '', language: 'python' }, { tools });
        const { result } = await runHostile(
          g,
          `import signal, select
other = os.fork()
if other == 0:
    select.select([], [], [], 3600)
    os._exit(0)
killer = os.fork()
if killer == 0:
    os.kill(-1, signal.SIGKILL)
    os._exit(0)
os.waitpid(killer, 0)
[os.waitpid(other, 0)[1], 'survived']`,
        );
        // kill(-1) spares the caller and the namespace's init, the interpreter: the other child is killed, the
        // program goes on, and nothing outside its sandbox is touched.
        expect(expectSucceeded(result)).toEqual([9, 'survived']);
        expect(expectSucceeded(await neighbour)).toBe('ok');
        expect(victimAlive(host())).toBe(true);
      },
    );

    g.test(
      '().__class__.__base__.__subclasses__() reaches os, and os still cannot leave the sandbox',
      async () => {
        const w = host();
        const r = await runReport(
          g,
          `osm = None
for c in ().__class__.__base__.__subclasses__():
    if c.__name__ == '_wrap_close':
        osm = c.__init__.__globals__
        break
attempt('reached', lambda: osm is not None and osm['__name__'])
attempt('root', lambda: sorted(osm['listdir']('/')))
attempt('uid', lambda: [osm['getuid'](), osm['geteuid'](), osm['getgid']()])
attempt('writable', lambda: [p for p in ['/', '/usr', '/usr/bin', '/etc', '/bin', '/dev', ${py(w.canaryDir)}] if osm['access'](p, osm['W_OK'])])
attempt('system', lambda: osm['system']('touch /usr/escaped /escaped 2>/dev/null'))
attempt('subprocess', lambda: osm['sys'].modules.get('subprocess') is not None or __import__('subprocess').__name__)
attempt('marker', lambda: osm['open'](${py(ESCAPE_MARKER)}, osm['O_WRONLY'] | osm['O_CREAT']))
attempt('canary', lambda: osm['stat'](${py(w.canaryFile)}))`,
        );
        expect(expectWorked(r, 'reached')).toBe('os');
        expect(expectWorked(r, 'root')).toEqual(sandboxRoot());
        for (const id of expectWorked(r, 'uid') as number[]) expect(id).not.toBe(0);
        expect(expectWorked(r, 'writable')).toEqual([]);
        expect(expectWorked(r, 'system')).not.toBe(0);
        expectWorked(r, 'subprocess');
        // The marker is written to the sandbox's own /tmp; useHostChecks asserts the host's does not exist.
        expectWorked(r, 'marker');
        expectDenied(r, 'canary', ['FileNotFoundError'], [E.NOENT]);
      },
    );

    // ---- the network -----------------------------------------------------------------------------------------

    g.test(
      "sockets: 127.0.0.1 is the sandbox's own; the host's TCP, UDP, abstract and unix servers see nothing; no way out",
      async () => {
        const w = host();
        const r = await runReport(
          g,
          `import socket
def tcp(host, port):
    s = socket.create_connection((host, port), timeout=2)
    s.sendall(b'escaped')
    return 'connected'
def udp(host, port):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    return s.sendto(b'escaped', (host, port))
def unix(address):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(2)
    s.connect(address)
    return 'connected'
attempt('tcp host', lambda: tcp('127.0.0.1', ${w.tcpPort}))
attempt('tcp localhost', lambda: tcp('localhost', ${w.tcpPort}))
attempt('udp host', lambda: udp('127.0.0.1', ${w.udpPort}))
attempt('abstract', lambda: unix('\\0' + ${py(w.abstractName)}))
attempt('unix path', lambda: unix(${py(w.unixPath)}))
attempt('tcp out', lambda: tcp('1.1.1.1', 53))
attempt('udp out', lambda: udp('1.1.1.1', 53))
attempt('dns', lambda: socket.getaddrinfo('example.com', 80))
attempt('interfaces', lambda: [name for _, name in socket.if_nameindex()])
attempt('raw', lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP))
attempt('packet', lambda: socket.socket(socket.AF_PACKET, socket.SOCK_RAW))
def own_server():
    srv = socket.socket()
    srv.bind(('127.0.0.1', ${w.tcpPort}))
    srv.listen()
    return tcp('127.0.0.1', ${w.tcpPort})
attempt('own server', own_server)`,
        );
        expectDenied(r, 'tcp host', ['ConnectionRefusedError'], [111]);
        expectDenied(r, 'tcp localhost', ['ConnectionRefusedError', 'gaierror', 'OSError']);
        // A datagram to the sandbox's own loopback goes nowhere; the host's server counts none (after each case).
        expectWorked(r, 'udp host');
        expectDenied(r, 'abstract', ['ConnectionRefusedError', 'FileNotFoundError'], [111, E.NOENT]);
        expectDenied(r, 'unix path', ['FileNotFoundError'], [E.NOENT]);
        expectDenied(r, 'tcp out', ['OSError', 'TimeoutError'], [E.NETUNREACH]);
        expectDenied(r, 'udp out', ['OSError'], [E.NETUNREACH]);
        expectDenied(r, 'dns', ['gaierror']);
        // Netlink (if_nameindex) and packet sockets are families the seccomp filter refuses.
        expectDenied(r, 'interfaces', ['OSError'], [E.AFNOSUPPORT]);
        expectDenied(r, 'raw', ['PermissionError'], [E.PERM]);
        expectDenied(r, 'packet', ['OSError'], [E.AFNOSUPPORT]);
        // Its own loopback: it may listen on the host server's port, and reach only itself.
        expect(expectWorked(r, 'own server')).toBe('connected');
        await new Promise((r2) => setTimeout(r2, 100));
      },
    );

    // ---- processes and memory --------------------------------------------------------------------------------

    g.test('a fork bomb (while True: os.fork()) ends with a clear error', async () => {
      const { result, ms } = await runHostile(
        g,
        `tag(${py(`${TAG}-bomb`)})
while True:
    os.fork()`,
        { timeoutMs: 5_000 },
      );
      expect(result.status).toBe('failed');
      if (result.status === 'failed') {
        // RLIMIT_NPROC: fork raises BlockingIOError (EAGAIN) in the program; uncaught, it is the process limit.
        expect(result.error, describeResult(result)).toMatchObject({
          code: 'PROCESS_LIMIT',
          name: 'BlockingIOError',
        });
      }
      expect(ms).toBeLessThan(5_000);
      await expectNoneNamed(`${TAG}-bomb`);
    });

    g.test(
      'a fork bomb that holds its processes: another execution and the host still fork; nothing survives',
      async () => {
        const name = `${TAG}-hold`;
        const bomb = runHostile(
          g,
          `tag(${py(name)})
try:
    while True:
        os.fork()
except BlockingIOError:
    pass
hold()`,
          { timeoutMs: 4_000 },
        );
        await waitFor(() => hostPidsNamed(name).length >= 8, 4_000);
        // RLIMIT_NPROC counts per user namespace: the bomb's limit is not its neighbours'.
        expect(expectSucceeded(await g.run({ code: HEALTH.python ?? '', language: 'python' }))).toBe(2);
        const fork = spawnSync('/bin/true', { ...(ROOT ? { uid: SANDBOX_UID, gid: SANDBOX_UID } : {}) });
        expect(fork.status, 'the host forks (as the sandbox uid) during the bomb').toBe(0);
        const { result } = await bomb;
        expectFailed(result, 'TIMEOUT');
        await expectNoneNamed(name);
      },
    );

    g.test('forked children spinning together: CPU_LIMIT across processes (the watchdog)', async () => {
      // RLIMIT_CPU is per process: each child alone stays under it, together they pass the budget.
      const { result, ms } = await runHostile(
        g,
        `for i in range(3):
    if os.fork() == 0:
        tag(${py(`${TAG}-cpu`)})
        while True:
            pass
while True:
    pass`,
        { timeoutMs: 20_000, cpuMs: 1_500 },
      );
      expect(expectFailed(result, 'CPU_LIMIT').message).toMatch(/processes/);
      // Four spinners: the budget is spent well before the 20 s timeout (a loaded CI machine shares the cores, so
      // the bound is loose; CPU_LIMIT rather than TIMEOUT is what shows the watchdog counted every process).
      expect(ms).toBeLessThan(15_000);
      await expectNoneNamed(`${TAG}-cpu`);
    });

    g.test('bytearray(10**10) is MEMORY_LIMIT', async () => {
      const { result } = await runHostile(g, 'x = bytearray(10**10)', { memoryBytes: 64 * MiB });
      expectFailed(result, 'MEMORY_LIMIT');
    });

    g.test('a growing list is MEMORY_LIMIT', async () => {
      const { result } = await runHostile(g, "x = []\nwhile True:\n    x.append('y' * 10**6)", {
        memoryBytes: 64 * MiB,
      });
      expectFailed(result, 'MEMORY_LIMIT');
    });

    g.test(
      "fork, then allocate in every child: MEMORY_LIMIT across processes (the host's watchdog)",
      async () => {
        // Each child stays under its own RLIMIT_AS; together they hold 8 x 48 MiB against a 64 MiB limit. Bounded,
        // so that a broken watchdog fails this case instead of the host.
        const { result, ms } = await runHostile(
          g,
          `for i in range(8):
    if os.fork() == 0:
        tag(${py(`${TAG}-mem`)})
        keep = b'x' * (48 << 20)
        hold()
hold()`,
          { memoryBytes: 64 * MiB, timeoutMs: 10_000 },
        );
        expectFailed(result, 'MEMORY_LIMIT');
        expect(ms).toBeLessThan(5_000);
        await expectNoneNamed(`${TAG}-mem`);
      },
    );

    g.test('memory in memfds (outside every address space) is MEMORY_LIMIT', async () => {
      const { result } = await runHostile(
        g,
        `fds = []
chunk = b'x' * (1 << 20)
for i in range(16):
    fd = os.memfd_create('m%d' % i)
    for _ in range(32):
        os.write(fd, chunk)
    fds.append(fd)
hold()`,
        { memoryBytes: 64 * MiB, timeoutMs: 10_000 },
      );
      expectFailed(result, 'MEMORY_LIMIT');
    });

    g.test("while True: pass is TIMEOUT, and the host's event loop keeps turning", async () => {
      const { value, lag } = await withLag(() =>
        runHostile(g, 'while True:\n    pass', { timeoutMs: 1_000 }),
      );
      expectFailed(value.result, 'TIMEOUT');
      expect(value.ms).toBeLessThan(3_000);
      expect(lag, "the host's event loop").toBeLessThan(500);
    });

    g.test(
      'ignoring SIGTERM and SIGINT and trying to raise its rlimits does not outlast the timeout',
      async () => {
        const { result, ms } = await runHostile(
          g,
          `import signal, resource
for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGXCPU):
    signal.signal(s, signal.SIG_IGN)
for r in (resource.RLIMIT_CPU, resource.RLIMIT_AS, resource.RLIMIT_NPROC):
    try:
        resource.setrlimit(r, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    except (ValueError, OSError):
        pass
while True:
    pass`,
          { timeoutMs: 1_000 },
        );
        expectFailed(result, 'TIMEOUT');
        expect(ms).toBeLessThan(3_000);
      },
    );

    // ---- output --------------------------------------------------------------------------------------------

    g.test('a print flood is OUTPUT_LIMIT', async () => {
      const { result } = await runHostile(g, "while True:\n    print('x' * 1000)", {
        outputBytes: 64 * 1024,
      });
      expectFailed(result, 'OUTPUT_LIMIT');
    });

    g.test('raw writes to fds 1 and 2 (under print) are OUTPUT_LIMIT', async () => {
      for (const fd of [1, 2]) {
        const { result } = await runHostile(g, `while True:\n    os.write(${fd}, b'y' * 4096 + b'\\n')`, {
          outputBytes: 64 * 1024,
        });
        expectFailed(result, 'OUTPUT_LIMIT');
      }
    });

    g.test(
      "an endless line on the protocol fd is PROTOCOL_VIOLATION, the host's memory bounded",
      async () => {
        const before = process.memoryUsage().rss;
        const { value, lag } = await withLag(() =>
          runHostile(g, "chunk = b'z' * (1 << 20)\nwhile True:\n    os.write(3, chunk)", {
            timeoutMs: 10_000,
          }),
        );
        // Over MAX_LINE_BYTES, promptly: the host used to rescan the whole pending line at every chunk.
        expect(expectFailed(value.result, 'PROTOCOL_VIOLATION').message).toMatch(/size limit/);
        expect(value.ms).toBeLessThan(5_000);
        expect(lag, "the host's event loop").toBeLessThan(500);
        expect(process.memoryUsage().rss - before).toBeLessThan(512 * MiB);
      },
    );

    g.test(
      'tool calls that pile up on the host (one call line written again and again) are MEMORY_LIMIT',
      async () => {
        const before = process.memoryUsage().rss;
        // The program spends no memory of its own: one 16 MiB line, written 200 times, for a tool that hangs.
        const { result } = await expectContained(
          g,
          {
            language: 'python',
            code: `${PRELUDE}
import json
line = (json.dumps({'t': 'call', 'id': 'c', 'ns': 'tools', 'name': 'hang', 'args': json.dumps({'s': 'x' * (16 << 20)})}) + '\\n').encode()
for i in range(200):
    os.write(3, line.replace(b'"c"', b'"call-%d"' % (i + 1), 1))
hold()`,
          },
          { tools: [hangTool()], limits: { timeoutMs: 10_000 } },
        );
        expect(expectFailed(result, 'MEMORY_LIMIT').message).toMatch(/tool calls/);
        expect(process.memoryUsage().rss - before, "the host's memory").toBeLessThan(768 * MiB);
      },
    );

    g.test('tool outcomes the program never reads are MEMORY_LIMIT', async () => {
      const { result } = await expectContained(
        g,
        {
          language: 'python',
          code: `${PRELUDE}
import json
line = (json.dumps({'t': 'call', 'id': 'c', 'ns': 'tools', 'name': 'echo', 'args': json.dumps({'s': 'x' * (8 << 20)})}) + '\\n').encode()
for i in range(200):
    os.write(3, line.replace(b'"c"', b'"call-%d"' % (i + 1), 1))
hold()`,
        },
        { tools: [echoTool()], limits: { timeoutMs: 10_000 } },
      );
      expect(expectFailed(result, 'MEMORY_LIMIT').message).toMatch(/unread/);
    });

    // Issue 15 class 8: the host holds the artifact caps whatever the guest's done message lists.
    for (const [what, files] of [
      ['3,000 files', "[{'name': 'f%d' % i, 'data': 'eA=='} for i in range(3000)]"],
      [
        '40 files of 1 MiB',
        "[{'name': 'b%d' % i, 'data': base64.b64encode(b'x' * (1 << 20)).decode()} for i in range(40)]",
      ],
      ['one name 500 times', "[{'name': 'same', 'data': 'eA=='} for i in range(500)]"],
    ] as const) {
      g.test(
        `a forged done message with ${what} returns only what the host's artifact caps allow`,
        async () => {
          const { result } = await runHostile(
            g,
            `import json, base64
files = ${files}
os.write(3, (json.dumps({'t': 'done', 'ok': True, 'value': '1', 'artifacts': files}) + '\\n').encode())
hold()`,
            { timeoutMs: 10_000 },
          );
          const artifacts = result.artifacts ?? [];
          expect(artifacts.length).toBeLessThanOrEqual(1000);
          expect(artifacts.reduce((n, a) => n + a.data.length, 0)).toBeLessThanOrEqual(32 * MiB);
          expect(new Set(artifacts.map((a) => a.name)).size).toBe(artifacts.length);
        },
        // 56 MB of base64 made, written and read on a loaded two-core machine: ~27 s of the default 30 s seen.
        90_000,
      );
    }

    // ---- the disk --------------------------------------------------------------------------------------------

    g.test('a file over 256 MiB in the workspace is FILE_LIMIT (RLIMIT_FSIZE)', async () => {
      const { result } = await runHostile(
        g,
        `chunk = b'x' * (1 << 20)
with open('big', 'wb') as f:
    for _ in range(1024):
        f.write(chunk)`,
        { timeoutMs: 10_000 },
      );
      expect(expectFailed(result, 'FILE_LIMIT').name).toBe('OSError');
    });

    g.test("many large files in the workspace: FILE_LIMIT at the workspace's budget", async () => {
      const { result } = await runHostile(
        g,
        `chunk = b'x' * (1 << 20)
for i in range(32):
    with open('f%d' % i, 'wb') as f:
        for _ in range(64):
            f.write(chunk)
hold()`,
        { timeoutMs: 15_000 },
      );
      expect(expectFailed(result, 'FILE_LIMIT').message).toMatch(/workspace|No space left on device/);
    });

    g.test("many empty files in the workspace: FILE_LIMIT at the workspace's entry budget", async () => {
      const { result } = await runHostile(
        g,
        `for i in range(50000):
    open('e%d' % i, 'w').close()
hold()`,
        { timeoutMs: 15_000 },
      );
      expect(expectFailed(result, 'FILE_LIMIT').message).toMatch(/workspace|No space left on device/);
    });

    g.test("files deleted but held open count towards the workspace's budget", async () => {
      const { result } = await runHostile(
        g,
        `chunk = b'x' * (1 << 20)
held = []
for i in range(24):
    f = open('d%d' % i, 'wb')
    for _ in range(64):
        f.write(chunk)
    f.flush()
    os.unlink('d%d' % i)
    held.append(f)
hold()`,
        { timeoutMs: 15_000 },
      );
      expect(expectFailed(result, 'FILE_LIMIT').message).toMatch(/workspace|No space left on device/);
    });

    g.test("filling /tmp is FILE_LIMIT (a sized tmpfs) and the host's /tmp does not fill", async () => {
      const name = `codecall-escape-fill-${randomUUID()}`;
      const free = () => {
        const s = statfsSync(tmpdir());
        return s.bavail * s.bsize;
      };
      const before = free();
      // Bounded at 1 GiB: an unsized tmpfs fails this case, not the host.
      const { result } = await runHostile(
        g,
        `chunk = b'x' * (1 << 20)
for i in range(8):
    with open('/tmp/${name}-%d' % i, 'wb') as f:
        for _ in range(128):
            f.write(chunk)`,
        { timeoutMs: 10_000 },
      );
      expect(expectFailed(result, 'FILE_LIMIT').message).toMatch(/No space left/);
      expect(readdirSync(tmpdir()).filter((n) => n.startsWith(name))).toEqual([]);
      expect(before - free(), "the host's /tmp").toBeLessThan(256 * MiB);
    });

    g.test('filling /dev/shm is FILE_LIMIT', async () => {
      const { result } = await runHostile(
        g,
        `chunk = b'x' * (1 << 20)
with open('/dev/shm/fill', 'wb') as f:
    for _ in range(256):
        f.write(chunk)`,
        { timeoutMs: 10_000 },
      );
      expect(expectFailed(result, 'FILE_LIMIT').message).toMatch(/No space left/);
    });

    // ---- pid 1, side channels and the host's walkers (issue 15) --------------------------------------------

    for (const [label, policy, filters] of [
      ['processes allowed', OPEN, 1],
      ['processes off', {}, 2],
    ] as const) {
      g.test(
        `pid 1 is the interpreter; every process of the sandbox is the program's own, under its seccomp filters (${label})`,
        async () => {
          const r = await runReport(
            g,
            `import ctypes, select
libc = ctypes.CDLL(None, use_errno=True)
def c(*args):
    ctypes.set_errno(0)
    return [libc.syscall(*[ctypes.c_long(a) for a in args]), ctypes.get_errno()]
kids = []
for _ in range(2):
    pid = os.fork()
    if pid == 0:
        select.select([], [], [], 3600)
        os._exit(0)
    kids.append(pid)
def status(pid):
    fields = dict(l.split(':', 1) for l in open('/proc/%d/status' % pid).read().splitlines() if ':' in l)
    return [pid, int(fields['PPid']), int(fields['Seccomp']), int(fields.get('Seccomp_filters', '0'))]
pids = sorted(int(p) for p in os.listdir('/proc') if p.isdigit())
attempt('me', lambda: os.getpid())
attempt('processes', lambda: [status(p) for p in pids])
attempt('kids', lambda: kids)
# pid 1's memory is the program's own now; another process's is not for writing by any means.
attempt('pid 1 mem', lambda: open('/proc/1/mem', 'r+b', buffering=0).close())
NR = {'x86_64': (101, 311), 'aarch64': (117, 271)}.get(os.uname().machine)
attempt('ptrace pid 1', lambda: c(NR[0], 16, 1, 0, 0))
attempt('ptrace kid', lambda: c(NR[0], 16, kids[0], 0, 0))
buf = ctypes.create_string_buffer(8)
iov = (ctypes.c_void_p * 2)(ctypes.addressof(buf), 8)
attempt('process_vm_writev kid', lambda: c(NR[1], kids[0], ctypes.addressof(iov), 1, ctypes.addressof(iov), 1, 0))
attempt('clear death signal', lambda: [libc.prctl(1, 0, 0, 0, 0), ctypes.get_errno()])`,
            {},
            policy,
          );
          expect(expectWorked(r, 'me'), 'the interpreter is pid 1').toBe(1);
          const kids = expectWorked(r, 'kids') as number[];
          const processes = expectWorked(r, 'processes') as [number, number, number, number][];
          expect(processes.map(([pid]) => pid).sort(), 'the interpreter and its two children').toEqual(
            [1, ...kids].sort(),
          );
          for (const [pid, ppid, mode, count] of processes) {
            // Mode 2 is a seccomp filter; processes off, the no-exec filter is on every process too.
            expect([pid, mode], `seccomp of pid ${pid}`).toEqual([pid, 2]);
            expect(count, `seccomp filters of pid ${pid}`).toBeGreaterThanOrEqual(filters);
            if (pid !== 1) expect(ppid).toBe(1);
          }
          expectWorked(r, 'pid 1 mem');
          for (const name of ['ptrace pid 1', 'ptrace kid', 'process_vm_writev kid', 'clear death signal']) {
            expect(expectWorked(r, name), name).toEqual([-1, E.PERM]);
          }
        },
      );
    }

    g.test(
      'inotify and fanotify are refused: no view of the shared /usr (imports, program starts)',
      async () => {
        const r = await runReport(
          g,
          `import ctypes
libc = ctypes.CDLL(None, use_errno=True)
def c(fn, *args):
    ctypes.set_errno(0)
    return [fn(*args), ctypes.get_errno()]
NR = {'x86_64': {'inotify_init': 253, 'inotify_init1': 294, 'fanotify_init': 300, 'fanotify_mark': 301},
      'aarch64': {'inotify_init1': 26, 'fanotify_init': 262, 'fanotify_mark': 263}}[os.uname().machine]
attempt('inotify_init1', lambda: c(libc.inotify_init1, 0))
attempt('inotify_init1 nonblock', lambda: c(libc.inotify_init1, 0o4000))
attempt('inotify_init', lambda: c(libc.inotify_init))
attempt('fanotify_init', lambda: c(libc.fanotify_init, 0, 0))
attempt('fanotify_init notif', lambda: c(libc.fanotify_init, 0x8, 0))
for name, nr in NR.items():
    attempt('raw ' + name, lambda nr=nr: c(libc.syscall, nr, 0, 0, 0, 0, 0))`,
        );
        const names = [
          'inotify_init1',
          'inotify_init1 nonblock',
          'inotify_init',
          'fanotify_init',
          'fanotify_init notif',
        ];
        for (const name of names) expect(expectWorked(r, name), name).toEqual([-1, E.PERM]);
        const raw = Object.keys(r).filter((name) => name.startsWith('raw '));
        expect(raw.length).toBeGreaterThanOrEqual(3);
        for (const name of raw) expect(expectWorked(r, name), name).toEqual([-1, E.PERM]);
      },
    );

    g.test(
      'socket families: unix and IP on its own loopback only; netlink, packet, vsock, alg, key, xdp... refused',
      async () => {
        const refused: Record<string, [number, number, number]> = {
          'netlink route': [16, 3, 0],
          'netlink uevent': [16, 2, 15],
          'netlink sock_diag': [16, 3, 4],
          'netlink audit': [16, 3, 9],
          packet: [17, 3, 0],
          'packet dgram': [17, 2, 0],
          vsock: [40, 1, 0],
          alg: [38, 5, 0],
          key: [15, 3, 2],
          xdp: [44, 3, 0],
          bluetooth: [31, 3, 0],
          tipc: [30, 2, 0],
          can: [29, 3, 1],
          rds: [21, 5, 0],
          unspec: [0, 1, 0],
          'out of range': [1000, 1, 0],
        };
        const tries = Object.entries(refused)
          .map(
            ([name, [family, type, proto]]) =>
              `attempt(${py(name)}, lambda: socket.socket(${family}, ${type}, ${proto}).close())\n` +
              `attempt(${py(`raw ${name}`)}, lambda: c(libc.socket, ${family}, ${type}, ${proto}))`,
          )
          .join('\n');
        const r = await runReport(
          g,
          `import ctypes, socket
libc = ctypes.CDLL(None, use_errno=True)
def c(fn, *args):
    ctypes.set_errno(0)
    return [fn(*args), ctypes.get_errno()]
${tries}
attempt('socketpair netlink', lambda: c(libc.socketpair, 16, 3, 0, ctypes.create_string_buffer(8)))
attempt('socketpair unix', lambda: [s.close() for s in socket.socketpair()] and 'ok')
attempt('unix', lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).close())
attempt('inet', lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).close())
attempt('inet6', lambda: socket.socket(socket.AF_INET6, socket.SOCK_STREAM).close())`,
        );
        for (const name of Object.keys(refused)) {
          expectDenied(r, name, ['OSError'], [E.AFNOSUPPORT]);
          expect(expectWorked(r, `raw ${name}`), `raw ${name}`).toEqual([-1, E.AFNOSUPPORT]);
        }
        expect(expectWorked(r, 'socketpair netlink')).toEqual([-1, E.AFNOSUPPORT]);
        expect(expectWorked(r, 'socketpair unix')).toBe('ok');
        for (const name of ['unix', 'inet', 'inet6']) expectWorked(r, name);
      },
    );

    g.test(
      "the host's activity reads as empty files (/proc/stat, loadavg, meminfo, pressure, locks...); only the sandbox's own namespaced settings are writable",
      async () => {
        const masked = ['stat', 'loadavg', 'meminfo', 'vmstat', 'diskstats', 'interrupts', 'locks'];
        masked.push('pressure/cpu', 'pressure/io', 'pressure/memory');
        const present = masked.filter((name) => existsSync(`/proc/${name}`));
        const r = await runReport(
          g,
          `def read(path):
    with open(path) as f:
        return f.read()
for name in ${JSON.stringify(present)}:
    attempt('read ' + name, lambda name=name: read('/proc/' + name))
attempt('trigger', lambda: open('/proc/pressure/cpu', 'w').write('some 150000 1000000'))
def writable():
    found = []
    for top in ('/proc', '/dev', '/sys'):
        for folder, dirs, names in os.walk(top):
            if folder == '/proc':
                dirs[:] = [d for d in dirs if not d.isdigit() and d not in ('self', 'thread-self')]
            for n in names:
                path = os.path.join(folder, n)
                try:
                    os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_NOCTTY))
                    found.append(path)
                except OSError:
                    pass
    return found
attempt('writable', writable)
attempt('sys', lambda: os.path.exists('/sys'))
attempt('cpus', lambda: os.cpu_count())`,
        );
        for (const name of present) expect(expectWorked(r, `read ${name}`), `/proc/${name}`).toBe('');
        if (present.includes('pressure/cpu')) expectDenied(r, 'trigger', ['OSError'], [E.ROFS]);
        expect(expectWorked(r, 'sys'), '/sys is not mounted').toBe(false);
        expect(expectWorked(r, 'cpus')).toBeGreaterThan(0);
        // Per namespace (the sandbox's own ipc and pid namespaces), or devices every process may write.
        const own = [
          /^\/proc\/sys\/fs\/mqueue\//,
          /^\/proc\/sys\/kernel\/(msg\w+|auto_msgmni|sem|shm\w+|ns_last_pid|pid_max)$/,
          /^\/dev\/(null|zero|full|random|urandom|tty|ptmx|pts\/ptmx|stdin|stdout|stderr|fd\/\d+)$/,
          // The seeded files over the kernel's randomness are the sandbox's own (bwrap-args.ts, SEEDED_FILES).
          /^\/proc\/sys\/kernel\/random\/(uuid|boot_id)$/,
        ];
        for (const path of expectWorked(r, 'writable') as string[]) {
          expect(
            own.some((re) => re.test(path)),
            `${path} is writable`,
          ).toBe(true);
        }
      },
    );

    g.test(
      'ordinary programs still work: asyncio on loopback, threads, multiprocessing, subprocess, numpy',
      async () => {
        const r = await runReport(
          g,
          `import asyncio, multiprocessing, socket, subprocess, threading
async def serve():
    async def echo(reader, writer):
        writer.write(await reader.readline())
        await writer.drain()
        writer.close()
    server = await asyncio.start_server(echo, '127.0.0.1', 0)
    port = server.sockets[0].getsockname()[1]
    reader, writer = await asyncio.open_connection('127.0.0.1', port)
    writer.write(b'ping\\n')
    await writer.drain()
    line = await reader.readline()
    writer.close()
    server.close()
    return line.decode().strip()
attempt('asyncio', lambda: asyncio.run(serve()))
attempt('getaddrinfo', lambda: socket.getaddrinfo('127.0.0.1', 80)[0][4][0])
def threads():
    seen = []
    ts = [threading.Thread(target=seen.append, args=(i,)) for i in range(4)]
    for t in ts: t.start()
    for t in ts: t.join()
    return sorted(seen)
attempt('threads', threads)
def pool():
    # A process, a pipe and a lock (a POSIX semaphore in /dev/shm). Not Pool: its threads sleep, and a thread's
    # time.sleep is a host timer (tool calls from threads are another class of issue 15).
    ctx = multiprocessing.get_context('fork')
    lock = ctx.Lock()
    here, there = ctx.Pipe()
    def work(conn):
        with lock:
            conn.send([abs(-1), abs(-2), abs(-3)])
    p = ctx.Process(target=work, args=(there,))
    p.start()
    value = here.recv()
    p.join()
    return value
attempt('multiprocessing', pool)
attempt('subprocess', lambda: subprocess.run(['sh', '-c', 'echo hi'], capture_output=True, text=True).stdout.strip())
attempt('sort', lambda: sorted(range(200000, 0, -1))[:3])
def numpy():
    import numpy as np
    return int(np.arange(10).sum())
attempt('numpy', numpy)
def pandas():
    import pandas as pd
    return int(pd.DataFrame({'a': [1, 2, 3]})['a'].sum())
attempt('pandas', pandas)`,
          { timeoutMs: 30_000 },
        );
        expect(expectWorked(r, 'asyncio')).toBe('ping');
        expect(expectWorked(r, 'getaddrinfo')).toBe('127.0.0.1');
        expect(expectWorked(r, 'threads')).toEqual([0, 1, 2, 3]);
        expect(expectWorked(r, 'multiprocessing')).toEqual([1, 2, 3]);
        expect(expectWorked(r, 'subprocess')).toBe('hi');
        expect(expectWorked(r, 'sort')).toEqual([1, 2, 3]);
        for (const [name, value] of [
          ['numpy', 45],
          ['pandas', 6],
        ] as const) {
          const a = attempted(r, name);
          if (a.error === 'ModuleNotFoundError')
            console.warn(`${name} is not installed here: its part is skipped`);
          else expect(expectWorked(r, name), name).toBe(value);
        }
      },
    );

    for (const [label, target] of [
      ['an absolute link', (dir: string) => dir],
      ['a relative link up past the sandbox root', (dir: string) => `../../../../../../../..${dir}`],
      ['a link through /proc/self', (dir: string) => `/proc/self/root${dir}`],
    ] as const) {
      g.test(
        `the watchdog does not follow a directory swapped for ${label} to a host directory (no figure depends on it)`,
        async () => {
          // More entries than the workspace's budget: a walker led into it would end the execution with FILE_LIMIT.
          const canary = mkdtempSync(join(tmpdir(), 'codecall-escape-walk-'));
          try {
            for (let i = 0; i < 12_000; i++) writeFileSync(join(canary, `c${i}`), '');
            chmodSync(canary, 0o755);
            const { result } = await runHostile(
              g,
              `import ctypes
libc = ctypes.CDLL(None, use_errno=True)
os.makedirs('d/inner')
open('d/inner/f', 'w').write('x')
os.symlink(${py(target(canary))}, 'l')
os.makedirs('deep/a/b')
os.symlink(${py(target(canary))}, 'deep/a/l')
swaps = 0
# renameat2(RENAME_EXCHANGE): the directory and the link trade places atomically, over and over (a count, not
# a time: the program's clock is the journal's).
while swaps < 300000:
    libc.renameat2(-100, b'd', -100, b'l', 2)
    libc.renameat2(-100, b'deep/a/b', -100, b'deep/a/l', 2)
    swaps += 1
[swaps, os.path.islink('d') or os.path.islink('l')]`,
              { timeoutMs: 20_000 },
            );
            expect(expectSucceeded(result)).toEqual([300000, true]);
            // What came back is the workspace's own files, never the host directory's.
            if (result.status === 'succeeded') {
              const names = (result.artifacts ?? []).map((a) => a.name);
              expect(
                names.some((n) => /c\d+$/.test(n)),
                names.join(', '),
              ).toBe(false);
            }
            expect(readdirSync(canary).length).toBe(12_000);
          } finally {
            rmSync(canary, { recursive: true, force: true });
          }
        },
        60_000,
      );
    }

    // ---- not contained yet ----------------------------------------------------------------------------------
    // Kernel memory no rlimit counts and the host cannot attribute: memory.max of a cgroup charges it to the
    // sandbox (or seccomp refuses the calls). Kept here, skipped with the reason, to be turned on with them.
    // With a memory cgroup (root, a writable hierarchy) the group's limit charges them: contained.
    for (const [name, { why, program }] of Object.entries(KNOWN_HOLES)) {
      const test = MEMORY_CGROUP ? it : it.skip;
      test(`${name}${MEMORY_CGROUP ? ' (the memory cgroup)' : ` [not contained without cgroups: ${why}]`}`, async () => {
        const { result } = await runHostile(g, program, { memoryBytes: 64 * MiB, timeoutMs: 5_000 });
        expectFailed(result, 'MEMORY_LIMIT');
      });
    }
  });
}

/** Whether the python driver here puts sandboxes in memory cgroups (as root, with a writable hierarchy). */
const MEMORY_CGROUP = process.getuid?.() === 0 && (await detectCgroups()).manager !== null;

/**
 * Memory the kernel keeps for the sandbox that no rlimit counts and the host's watchdog cannot see. Each program
 * holds 512 MiB against a 64 MiB limit and succeeds today (reproduced by hand); with the memory cgroup's
 * memory.max (it charges shmem) or a seccomp filter refusing the calls, flip `it.skip` to run them and expect
 * MEMORY_LIMIT or a denied call.
 */
const KNOWN_HOLES: Record<string, { why: string; program: string }> = {
  'SysV shared memory (shmget, shmat, shmdt) kept after detaching': {
    why: "the segments live in the sandbox's IPC namespace, in no address space and no process the host can see; needs the memory cgroup or seccomp",
    program: `import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
for i in range(16):
    sid = libc.shmget(0, 32 << 20, 0o1000 | 0o600)
    addr = libc.shmat(sid, None, 0)
    ctypes.memset(addr, 1, 32 << 20)
    libc.shmdt(ctypes.c_void_p(addr))
hold()`,
  },
  'memfds parked in a unix socket queue (SCM_RIGHTS) and closed': {
    why: 'held by no process, so the watchdog cannot find them; needs the memory cgroup or seccomp',
    program: `import socket
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
chunk = b'x' * (1 << 20)
for i in range(16):
    fd = os.memfd_create('p%d' % i)
    for _ in range(32):
        os.write(fd, chunk)
    socket.send_fds(a, [b'x'], [fd])
    os.close(fd)
hold()`,
  },
};
