// Input files and artifacts of the python driver's workspace, for real in bubblewrap.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPythonDriver, probePython } from '../../src/sandbox/index.ts';
import type { PythonDriver } from '../../src/sandbox/index.ts';
import type { ExecutionResult, WorkspaceFile } from '../../src/spec/index.ts';

const probe = await probePython();
const text = (s: string) => new TextEncoder().encode(s);

describe.skipIf(!probe.ok)(`python workspace${probe.ok ? '' : ` (skipped: ${probe.reason})`}`, () => {
  let driver: PythonDriver;
  beforeAll(async () => {
    driver = createPythonDriver({ warm: 1, workspaceBytes: 8 * 1024 * 1024 });
    await driver.ready();
  });
  afterAll(() => driver.close());
  const run = (code: string, files?: WorkspaceFile[]): Promise<ExecutionResult> =>
    driver.execute({
      code,
      language: 'python',
      tools: [],
      host: { call: () => Promise.resolve({ ok: true, value: null }) },
      ...(files ? { files } : {}),
    });

  it('puts input files in the working directory and returns what the program wrote', async () => {
    const r = await run(
      'import os\nrows = open("data.csv").read().splitlines()\nos.makedirs("out", exist_ok=True)\nopen("out/n.txt", "w").write(str(len(rows)))\nopen("notes.md", "w").write("# hi")\n[os.getcwd(), sorted(os.listdir("."))]',
      [
        { name: 'data.csv', data: text('a,b\n1,2\n3,4\n') },
        { name: 'ref/keep.txt', data: text('unchanged') },
      ],
    );
    expect(r.status).toBe('succeeded');
    if (r.status !== 'succeeded') return;
    expect(r.value).toEqual(['/workspace', ['data.csv', 'notes.md', 'out', 'ref']]);
    const artifacts = Object.fromEntries(
      (r.artifacts ?? []).map((f) => [f.name, new TextDecoder().decode(f.data)]),
    );
    // The inputs it only read are not artifacts.
    expect(artifacts).toEqual({ 'notes.md': '# hi', 'out/n.txt': '3' });
  });

  it('returns files written before a failure too; a full workspace is ENOSPC inside, the host is untouched', async () => {
    const r = await run('open("partial.txt", "w").write("so far")\nraise RuntimeError("then it broke")');
    expect(r.status).toBe('failed');
    expect(r.artifacts?.map((f) => f.name)).toEqual(['partial.txt']);
    const full = await run(
      'with open("big.bin", "wb") as f:\n    while True:\n        f.write(b"x" * 1048576)',
    );
    expect(full.status === 'failed' && full.error).toMatchObject({ name: 'OSError' });
    expect(full.status === 'failed' && full.error.message).toContain('No space left on device');
  });

  it('refuses input names that leave the workspace', async () => {
    for (const name of ['../escape.txt', '/etc/passwd', 'a/../../b', '']) {
      const r = await run('1', [{ name, data: text('x') }]);
      expect(r.status === 'failed' && r.error.code).toBe('INVALID_ARGUMENT');
    }
  });
});
