// Nothing of a python sandbox outlives its execution, without cgroups (what a non-root host has): the pid
// namespace is the container, its pid 1 is the interpreter, and pid 1's death ends every process in it. Each
// kind of end is run in a host process of its own (leftover-host.ts), as this uid and, when root, as another
// one and with cgroups, so that the host's own crash (SIGKILL) is one of them.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { probePython } from '../../src/sandbox/index.ts';
import { detectCgroups } from '../../src/sandbox/python/cgroups.ts';

const probe = await probePython();
const HOST = fileURLToPath(new URL('./leftover-host.ts', import.meta.url));
const ROOT = process.getuid?.() === 0;
/** Another uid runs the host too: the unprivileged case (bwrap in a user namespace of its own, no cgroups). */
const AS_OTHER = ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'];

function otherUid(): string | null {
  if (!ROOT) return 'not root: the tests run as this uid only, which is not root';
  const check = spawnSync(
    AS_OTHER[0] as string,
    [...AS_OTHER.slice(1), process.execPath, '--import', 'tsx', '-e', '0'],
    {
      cwd: process.cwd(),
      stdio: 'ignore',
    },
  );
  return check.status === 0 ? null : 'setpriv cannot run node with tsx as uid 65534 here';
}
const otherSkip = otherUid();
/** With cgroups too (root, a writable hierarchy): the parked shell's path, the group's kill at the end. */
const cgroupSkip = !ROOT
  ? 'not root'
  : (await detectCgroups()).manager === null
    ? 'no writable cgroup hierarchy'
    : null;
if (cgroupSkip) console.warn(`python leftovers with cgroups skipped: ${cgroupSkip}`);
if (otherSkip) console.warn(`python leftovers as another uid skipped: ${otherSkip}`);

function tagged(tag: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === tag) found.push(Number(entry));
    } catch {
      // Gone.
    }
  }
  return found;
}

interface Ended {
  result: { status: string; error?: { code: string }; logs?: { message: string }[] } | null;
  sawReady: boolean;
  leftover: number[];
}

/** Runs one host process to its end (or kills it once the program is ready, for "crash"). */
async function runHost(end: string, asOther: boolean, cgroups = false): Promise<Ended> {
  const tag = `ccleft${randomBytes(4).toString('hex')}`;
  const argv = [process.execPath, '--import', 'tsx', HOST, end, tag, cgroups ? 'cgroups' : 'none'];
  const [command, ...args] = asOther ? [...AS_OTHER, ...argv] : argv;
  const child = spawn(command as string, args, { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  let sawReady = false;
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (text: string) => {
    out += text;
    if (!sawReady && out.includes('READY\n')) {
      sawReady = true;
      // The host's crash: the process that ran the driver dies at once, with nothing cleaned up.
      if (end === 'crash') child.kill('SIGKILL');
    }
  });
  await new Promise((resolve) => child.once('close', resolve));
  const line = out.split('\n').find((l) => l.startsWith('RESULT '));
  const result = line ? (JSON.parse(line.slice('RESULT '.length)) as Ended['result']) : null;
  // The kernel ends a dead pid namespace's processes at once, but reaping them takes a moment.
  let leftover = tagged(tag);
  for (let i = 0; i < 50 && leftover.length > 0; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    leftover = tagged(tag);
  }
  // Cleans up what a failing run left, so that one failure does not leave processes for the next tests.
  for (const pid of leftover) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone.
    }
  }
  return { result, sawReady, leftover };
}

const ENDS: Record<string, string | null> = {
  success: null,
  error: 'GUEST_ERROR',
  timeout: 'TIMEOUT',
  abort: 'CANCELLED',
  crash: null,
};

describe.skipIf(!probe.ok)(
  `python sandbox: no process outlives its execution, without cgroups${probe.ok ? '' : ` (skipped: ${probe.reason})`}`,
  () => {
    const runs = [
      { who: ROOT ? 'as root' : 'as this uid', asOther: false, cgroups: false, skip: null },
      { who: 'as uid 65534', asOther: true, cgroups: false, skip: otherSkip },
      { who: 'as root with cgroups', asOther: false, cgroups: true, skip: cgroupSkip },
    ];
    for (const { who, asOther, cgroups, skip } of runs) {
      for (const [end, code] of Object.entries(ENDS)) {
        it.skipIf(skip !== null)(
          `${end}, ${who}: forks, daemons, cleared death signals, pid 1's memory`,
          async () => {
            const { result, sawReady, leftover } = await runHost(end, asOther, cgroups);
            expect(sawReady, 'the program reached tools.ready()').toBe(true);
            if (end === 'crash') expect(result).toBeNull();
            else if (code === null) expect(result?.status, JSON.stringify(result)).toBe('succeeded');
            else expect(result?.error?.code, JSON.stringify(result)).toBe(code);
            // What the program tried, as it logged it: the interpreter is pid 1, and no death signal was cleared.
            const tried = result?.logs?.map((l) => l.message).join('\n') ?? '';
            if (result) expect(tried).toContain("'own death signal': [-1, 1]");
            if (result) expect(tried).toContain("'pid 1': 'own'");
            // Processes are off: execve fails in the interpreter and in its children alike.
            if (result) expect(tried).toContain("'exec': [-1, 1], 'exec in child': '[-1, 1]'");
            expect(leftover, 'processes of the sandbox left running').toEqual([]);
          },
          60_000,
        );
      }
    }
  },
);
