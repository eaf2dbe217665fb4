// The python image (numpy, pandas, matplotlib, scipy, scikit-learn, openpyxl, tabulate, requests): its versions in the
// engine a checkpoint is bound to, and matplotlib drawing a chart the program gets back as an artifact.
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPythonDriver, IMAGE_PACKAGES, probePython, pythonEngine } from '../../src/sandbox/index.ts';
import type { PythonDriver, PythonProbe } from '../../src/sandbox/index.ts';
import { parseProbeOutput } from '../../src/sandbox/python/probe.ts';

const probe = await probePython();

const FAKE: Extract<PythonProbe, { ok: true }> = {
  ok: true,
  bwrapPath: '/usr/bin/bwrap',
  pythonPath: '/usr/bin/python3',
  bwrap: '0.8.0',
  python: '3.11.2',
  safePathFlag: true,
  packages: {
    numpy: '1.24.2',
    pandas: '1.5.3',
    matplotlib: '3.6.3',
    scipy: '1.10.1',
    'scikit-learn': '1.2.1',
    openpyxl: '3.0.9',
    tabulate: '0.8.9',
    requests: '2.28.1',
    urllib3: '1.26.12',
  },
};

describe('the python image in the engine identity', () => {
  it("reads the probe's output: the interpreter's version and each image package's, null when missing", () => {
    const out = parseProbeOutput(
      '{"python": "3.11.2", "packages": {"numpy": "1.24.2", "pandas": null, "other": "1"}}\n',
    );
    expect(out?.python).toBe('3.11.2');
    expect(Object.keys(out?.packages ?? {})).toEqual([...IMAGE_PACKAGES]);
    expect(out?.packages.numpy).toBe('1.24.2');
    expect(out?.packages.pandas).toBeNull();
    expect(out?.packages.tabulate).toBeNull();
    expect(parseProbeOutput('3.11.2\n')).toBeNull();
  });

  it('names every installed package and its version after the interpreter and bubblewrap', () => {
    expect(pythonEngine(FAKE)).toBe(
      'cpython-3.11.2+bwrap-0.8.0+numpy-1.24.2+pandas-1.5.3+matplotlib-3.6.3+scipy-1.10.1+scikit-learn-1.2.1+openpyxl-3.0.9+tabulate-0.8.9+requests-2.28.1+urllib3-1.26.12',
    );
    // A package missing is left out (not a failure of the driver).
    expect(pythonEngine({ ...FAKE, packages: { ...FAKE.packages, tabulate: null } })).toBe(
      'cpython-3.11.2+bwrap-0.8.0+numpy-1.24.2+pandas-1.5.3+matplotlib-3.6.3+scipy-1.10.1+scikit-learn-1.2.1+openpyxl-3.0.9+requests-2.28.1+urllib3-1.26.12',
    );
  });

  it("changes when a package's version differs, as when the interpreter's does (a resumed task notices)", async () => {
    const drivers = [
      createPythonDriver({ warm: 0, probe: FAKE }),
      createPythonDriver({ warm: 0, probe: { ...FAKE, packages: { ...FAKE.packages, scipy: '1.11.4' } } }),
      createPythonDriver({ warm: 0, probe: { ...FAKE, packages: { ...FAKE.packages, openpyxl: null } } }),
      createPythonDriver({ warm: 0, probe: { ...FAKE, python: '3.11.4' } }),
    ];
    try {
      const engines = drivers.map((d) => d.engine);
      // The manifest check (durable/manifest-check.ts) compares engines as strings: each differs from the first.
      expect(new Set(engines).size).toBe(engines.length);
      expect(engines[1]).toContain('+scipy-1.11.4');
      expect(engines[2]).not.toContain('openpyxl');
    } finally {
      await Promise.all(drivers.map((d) => d.close()));
    }
  });
});

const matplotlib = probe.ok ? probe.packages.matplotlib : null;
const skipReason = !probe.ok
  ? probe.reason
  : matplotlib
    ? ''
    : 'matplotlib is not installed here (apt-get install --no-install-recommends python3-matplotlib)';
if (skipReason) console.log(`python image chart test skipped: ${skipReason}`);

describe.skipIf(!!skipReason)(`python image${skipReason ? ` (skipped: ${skipReason})` : ''}`, () => {
  let driver: PythonDriver;
  beforeAll(async () => {
    driver = createPythonDriver({ warm: 0 });
    await driver.ready();
  });
  afterAll(() => driver.close());

  it('the probe found the versions of what is installed, and the engine names them; once per process', async () => {
    if (!probe.ok) return;
    // Cached: the image's versions are read by one probe sandbox per process, not one per driver or execution.
    expect(await probePython()).toBe(probe);
    expect(Object.isFrozen(probe.packages)).toBe(true);
    expect(probe.packages.matplotlib).toMatch(/^\d+\.\d+/);
    expect(driver.engine).toBe(pythonEngine(probe));
    expect(driver.engine).toContain(`+matplotlib-${probe.packages.matplotlib}`);
  });

  it('a matplotlib chart saved in the working directory comes back as a PNG artifact (Agg, no $HOME)', async () => {
    const r = await driver.execute({
      code: [
        'import os',
        'import matplotlib',
        'import matplotlib.pyplot as plt',
        'fig, ax = plt.subplots()',
        'ax.bar(["a", "b", "c"], [3, 1, 2])',
        'ax.set_title("counts")',
        'fig.savefig("chart.png")',
        '[matplotlib.get_backend(), os.environ.get("MPLBACKEND")]',
      ].join('\n'),
      language: 'python',
      tools: [],
      host: { call: () => Promise.reject(new Error('no tools')) },
      limits: { timeoutMs: 60_000, cpuMs: 60_000 },
    });
    expect(r.status, JSON.stringify(r.status === 'failed' ? r.error : null)).toBe('succeeded');
    if (r.status !== 'succeeded') return;
    expect(r.value).toEqual(['agg', 'Agg']);
    const chart = r.artifacts?.find((a) => a.name === 'chart.png');
    expect(chart).toBeDefined();
    // The PNG signature, and a real image rather than an empty file.
    expect([...(chart?.data.subarray(0, 8) ?? [])]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    expect(chart?.data.byteLength ?? 0).toBeGreaterThan(1000);
  });

  it("builds matplotlib's font list once, in a sandbox, and binds it read-only: a chart run builds none", async () => {
    // matplotlib logs "generated new fontManager" when it builds the list (a part of every chart run before).
    const chart = (name: string) =>
      [
        'import io, logging, os',
        'log = io.StringIO()',
        'logging.getLogger("matplotlib").addHandler(logging.StreamHandler(log))',
        'logging.getLogger("matplotlib").setLevel(logging.INFO)',
        'import matplotlib.pyplot as plt',
        'fig, ax = plt.subplots()',
        'ax.plot([1, 3, 2])',
        'fig.savefig("line.png")',
        `lists = sorted(n for n in os.listdir("/tmp") if n.startswith("fontlist"))`,
        `[log.getvalue(), lists, os.access("/tmp/${name}", os.W_OK)]`,
      ].join('\n');
    const run = (d: PythonDriver, code: string) =>
      d.execute({
        code,
        language: 'python',
        tools: [],
        host: { call: () => Promise.reject(new Error('no tools')) },
        limits: { timeoutMs: 60_000, cpuMs: 60_000 },
      });
    const dir = await mkdtemp(join(tmpdir(), 'codecall-fonts-test-'));
    const cached = createPythonDriver({ warm: 0, fontCacheDir: dir });
    const uncached = createPythonDriver({ warm: 0, fontCacheDir: false });
    try {
      const list = await cached.matplotlibFontList();
      expect(list).not.toBeNull();
      const name = basename(list ?? '');
      expect(name).toMatch(/^fontlist-v\d+\.json$/);
      // Kept under the cache directory, one folder per matplotlib and interpreter.
      expect(await readdir(dir)).toEqual([
        `matplotlib-${matplotlib}-cpython-${probe.ok ? probe.python : ''}`,
      ]);
      for (let i = 0; i < 2; i++) {
        const r = await run(cached, chart(name));
        expect(r.status === 'succeeded' ? r.value : r.error).toEqual(['', [name], false]);
      }
      // A new driver (another process) reads it from the cache: no build.
      const again = createPythonDriver({ warm: 0, fontCacheDir: dir });
      try {
        const r = await run(again, chart(name));
        expect(r.status === 'succeeded' && r.value).toEqual(['', [name], false]);
      } finally {
        await again.close();
      }
      // Without the list, the chart builds one (what the check above would see).
      expect(await uncached.matplotlibFontList()).toBeNull();
      const r = await run(uncached, chart(name));
      expect(r.status === 'succeeded' && r.value).toEqual([
        expect.stringContaining('generated new fontManager'),
        [name],
        true,
      ]);
    } finally {
      await Promise.all([cached.close(), uncached.close()]);
      await rm(dir, { recursive: true, force: true });
    }
  });
});
