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
});
