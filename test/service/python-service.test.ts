// The flow "analyse this CSV with pandas and return a summary and a chart", end to end through the service:
// a real server on loopback, the python sandbox, the file in, the chart out as an artifact.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probePython } from '../../src/sandbox/index.ts';
import { loadConfig } from '../../src/service/index.ts';
import { startService } from '../../src/http/index.ts';
import type { Service } from '../../src/http/index.ts';

const probe = await probePython();
const pandas = probe.ok
  ? await import('node:child_process').then(({ execFileSync }) => {
      try {
        execFileSync(probe.pythonPath, ['-c', 'import pandas']);
        return true;
      } catch {
        return false;
      }
    })
  : false;
const why = !probe.ok ? probe.reason : 'pandas is not installed (apt-get install python3-pandas)';

const CSV = 'city,month,rain_mm\nOslo,1,49\nOslo,2,36\nRome,1,67\nRome,2,73\nLima,1,1\nLima,2,0\n';

const PROGRAM = `import pandas as pd
df = pd.read_csv("rain.csv")
by_city = df.groupby("city")["rain_mm"].sum().sort_values(ascending=False)
bars = "".join(
    f'<rect x="{i * 60 + 10}" y="{150 - v}" width="40" height="{v}"/><text x="{i * 60 + 10}" y="170">{c}</text>'
    for i, (c, v) in enumerate(by_city.items())
)
open("chart.svg", "w").write(f'<svg xmlns="http://www.w3.org/2000/svg" width="200" height="180">{bars}</svg>')
print(df.describe().loc["mean"].to_string())
{"rows": len(df), "wettest": by_city.index[0], "total_mm": {c: int(v) for c, v in by_city.items()}}`;

describe.skipIf(!pandas)(`python tasks in the service${pandas ? '' : ` (skipped: ${why})`}`, () => {
  let dir: string;
  let service: Service;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'codecall-python-service-'));
    const config = loadConfig({
      env: {},
      flags: { port: '0', db: join(dir, 'tasks.db'), insecureNoAuth: true },
    });
    service = await startService(config, { log: () => undefined, model: null });
  });
  afterAll(async () => {
    await service.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('analyses a CSV with pandas and returns a summary and a chart', async () => {
    const res = await fetch(`${service.address}/api/v1/tasks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        code: PROGRAM,
        language: 'python',
        files: [{ name: 'rain.csv', content_base64: Buffer.from(CSV).toString('base64') }],
        tool_constraints: { allowed_libraries: ['pandas'] },
      }),
    });
    expect(res.status).toBe(201);
    const { task_id } = (await res.json()) as { task_id: string };
    let view: Record<string, unknown> = {};
    for (let i = 0; i < 300; i++) {
      view = (await (await fetch(`${service.address}/api/v1/tasks/${task_id}`)).json()) as Record<
        string,
        unknown
      >;
      if (view.status === 'succeeded' || view.status === 'failed') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(view.error).toBeNull();
    expect(view.status).toBe('succeeded');
    const result = view.result as { output: unknown; execution_log: { message: string }[] };
    expect(result.output).toEqual({ rows: 6, wettest: 'Rome', total_mm: { Rome: 140, Oslo: 85, Lima: 1 } });
    expect(result.execution_log.map((l) => l.message).join('\n')).toMatch(/rain_mm\s+37\.666/);
    const artifacts = view.artifacts as { name: string; size: number; sha256: string }[];
    expect(artifacts.map((a) => a.name)).toEqual(['chart.svg']);
    const chart = await fetch(`${service.address}/api/v1/tasks/${task_id}/artifacts/chart.svg`);
    expect(chart.status).toBe(200);
    expect(chart.headers.get('content-type')).toBe('image/svg+xml');
    expect(chart.headers.get('content-disposition')).toContain('attachment');
    const svg = await chart.text();
    expect(svg).toMatch(/^<svg /);
    expect(svg).toContain('<text x="10" y="170">Rome</text>');
    expect(Buffer.byteLength(svg)).toBe(artifacts[0]?.size);
    const missing = await fetch(`${service.address}/api/v1/tasks/${task_id}/artifacts/nope.txt`);
    expect(missing.status).toBe(404);
  });

  it('takes the task as multipart/form-data, the files as parts', async () => {
    const form = new FormData();
    form.append(
      'task',
      JSON.stringify({
        code: 'import os\nos.makedirs("out", exist_ok=True)\nopen("out/n.txt", "w").write(str(len(open("rain.csv").read().splitlines())))\nsorted(os.listdir("."))',
        language: 'python',
      }),
    );
    form.append('upload', new Blob([CSV], { type: 'text/csv' }), 'rain.csv');
    const res = await fetch(`${service.address}/api/v1/tasks`, { method: 'POST', body: form });
    expect(res.status).toBe(201);
    const { task_id } = (await res.json()) as { task_id: string };
    let view: { status?: string; result?: { output: unknown } } = {};
    for (let i = 0; i < 300 && view.status !== 'succeeded' && view.status !== 'failed'; i++) {
      await new Promise((r) => setTimeout(r, 50));
      view = (await (await fetch(`${service.address}/api/v1/tasks/${task_id}`)).json()) as typeof view;
    }
    expect(view.result?.output).toEqual(['out', 'rain.csv']);
    // An artifact in a folder: its name with / sent as %2F.
    const n = await fetch(`${service.address}/api/v1/tasks/${task_id}/artifacts/out%2Fn.txt`);
    expect(await n.text()).toBe('7');
    const noTask = new FormData();
    noTask.append('upload', new Blob(['x']), 'x.txt');
    const refused = await fetch(`${service.address}/api/v1/tasks`, { method: 'POST', body: noTask });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { details: { field: string } } }).error.details.field).toBe(
      'task',
    );
  });
});
