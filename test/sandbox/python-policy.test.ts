// The python driver's policy for imports and processes (tool_constraints), for real in bubblewrap.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPythonDriver, probePython } from '../../src/sandbox/index.ts';
import type { PythonDriver } from '../../src/sandbox/index.ts';
import type { ExecutionResult, SandboxPolicy } from '../../src/spec/index.ts';

const probe = await probePython();

describe.skipIf(!probe.ok)(`python policy${probe.ok ? '' : ` (skipped: ${probe.reason})`}`, () => {
  let driver: PythonDriver;
  beforeAll(async () => {
    driver = createPythonDriver({ warm: 2 });
    await driver.ready();
  });
  afterAll(() => driver.close());
  const run = (code: string, policy?: SandboxPolicy): Promise<ExecutionResult> =>
    driver.execute({
      code,
      language: 'python',
      tools: [],
      host: { call: () => Promise.resolve({ ok: true, value: null }) },
      ...(policy ? { policy } : {}),
    });
  const value = (r: ExecutionResult) => {
    if (r.status !== 'succeeded') throw new Error(`${r.error.code}: ${r.error.message}`);
    return r.value;
  };

  it('allowed_libraries: the listed modules import, others raise ImportError naming the policy', async () => {
    expect(
      value(
        await run('import math, json\nmath.floor(json.loads("2.5"))', { allowedLibraries: ['math', 'json'] }),
      ),
    ).toBe(2);
    const refused = await run('import os', { allowedLibraries: ['math'] });
    expect(refused.status).toBe('failed');
    if (refused.status === 'failed') {
      expect(refused.error.name).toBe('ImportError');
      expect(refused.error.message).toBe(
        "import of 'os' is not allowed for this task (allowed_libraries: math)",
      );
      expect(refused.error.line).toBe(1);
    }
    const from = await run('from os import path', { allowedLibraries: ['math'] });
    expect(from.status === 'failed' && from.error.message).toContain("import of 'os' is not allowed");
    // What a listed library needs internally is not the program's import.
    expect(
      value(await run('import pandas as pd\nint(pd.Series([1, 2]).sum())', { allowedLibraries: ['pandas'] })),
    ).toBe(3);
  });

  it('processes are off by default: refused with a clear error, and execve fails in the kernel too', async () => {
    const r = await run('import subprocess\nsubprocess.run(["/usr/bin/true"])');
    expect(r.status === 'failed' && r.error).toMatchObject({
      name: 'PermissionError',
      message: 'starting processes is not allowed for this task (tool_constraints.allow_subprocesses)',
    });
    expect((await run('import os\nos.system("true")')).status).toBe('failed');
    // Around the Python-level guard: the seccomp filter answers execve with EPERM (errno 1).
    const direct = await run(
      'import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\npid = os.fork()\nif pid == 0:\n    argv = (ctypes.c_char_p * 2)(b"/usr/bin/true", None)\n    libc.execv(b"/usr/bin/true", argv)\n    os._exit(100 + ctypes.get_errno())\nos.waitpid(pid, 0)[1] >> 8',
    );
    expect(value(direct)).toBe(101);
  });

  it('allow_subprocesses runs commands; blocked_commands still refuses the listed ones', async () => {
    const ok = await run('import subprocess\nsubprocess.run(["/usr/bin/true"]).returncode', {
      allowSubprocesses: true,
    });
    expect(value(ok)).toBe(0);
    const policy = { allowSubprocesses: true, blockedCommands: ['rm', 'curl'] };
    const blocked = await run('import subprocess\nsubprocess.run(["rm", "-rf", "/workspace/x"])', policy);
    expect(blocked.status === 'failed' && blocked.error.message).toBe(
      "starting 'rm' is not allowed for this task (tool_constraints.blocked_commands)",
    );
    const shell = await run('import os\nos.system("rm -rf /workspace/x")', policy);
    expect(shell.status === 'failed' && shell.error.name).toBe('PermissionError');
    expect(
      value(
        await run(
          'import subprocess\nsubprocess.run("echo hi", shell=True, capture_output=True).stdout.decode().strip()',
          policy,
        ),
      ),
    ).toBe('hi');
  });

  // pid 1 of the sandbox is the interpreter: every orphan of the program (a shell's `cmd &`, a double fork, a
  // daemon) is reparented to it, and its zombie counted towards the 32 processes until the runner reaps it.
  const subprocesses = { allowSubprocesses: true };
  const orphans = {
    'a shell that leaves `sleep 0 &` behind': [
      'import subprocess',
      'for i in range(100):',
      '    assert subprocess.run(["sh", "-c", "sleep 0 & true"]).returncode == 0',
    ],
    'os.system with a background job': [
      'import os',
      'for i in range(100):',
      '    assert os.system("sleep 0 & true") == 0',
    ],
    'a double fork (the child forks, then exits)': [
      'import os',
      'for i in range(100):',
      '    pid = os.fork()',
      '    if pid == 0:',
      '        if os.fork() == 0:',
      '            os._exit(0)',
      '        os._exit(0)',
      '    assert os.waitpid(pid, 0)[1] == 0',
    ],
    'a daemon (new session, double fork) through posix_spawn': [
      'import os',
      'for i in range(100):',
      '    pid = os.posix_spawn("/bin/sh", ["sh", "-c", "(setsid sh -c true &)"], {})',
      '    assert os.waitpid(pid, 0)[1] == 0',
    ],
  };
  for (const [name, lines] of Object.entries(orphans)) {
    it(`orphans are reaped, so 100 processes in turn do not hit the limit: ${name}`, async () => {
      expect(value(await run([...lines, 'True'].join('\n'), subprocesses))).toBe(true);
    });
  }

  it('the program still gets its own children exit status while orphans are reaped', async () => {
    const code = [
      'import os, subprocess',
      'def orphans():',
      '    for i in range(40):',
      '        assert subprocess.run(["sh", "-c", "sleep 0 & true"]).returncode == 0',
      // Each has exited (a zombie) before the orphans are reaped, and is waited for only after.
      'p = subprocess.Popen(["sh", "-c", "exit 3"])',
      'forked = os.fork()',
      'if forked == 0:',
      '    os._exit(5)',
      'spawned = os.posix_spawn("/bin/sh", ["sh", "-c", "exit 9"], {})',
      'orphans()',
      'codes = [p.wait(), os.waitpid(forked, 0)[1] >> 8, os.waitpid(spawned, 0)[1] >> 8]',
      'codes.append(subprocess.run(["sh", "-c", "sleep 0 & exit 7"]).returncode)',
      'codes.append(os.system("sleep 0 & exit 4") >> 8)',
      'orphans()',
      'codes.append(subprocess.run(["sh", "-c", "exit 6"]).returncode)',
      // Another thread starts (and waits for) its own while the main thread's orphans are reaped.
      'import threading',
      'others = []',
      'def other():',
      '    for i in range(30):',
      '        others.append(subprocess.run(["sh", "-c", "exit 2"]).returncode)',
      'thread = threading.Thread(target=other)',
      'thread.start()',
      'orphans()',
      'thread.join()',
      'codes + [len(others), sorted(set(others))]',
    ].join('\n');
    expect(value(await run(code, subprocesses))).toEqual([3, 5, 9, 7, 4, 6, 30, [2]]);
  });
});
