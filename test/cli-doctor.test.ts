import { beforeAll, describe, expect, it } from 'vitest';
import { probePython } from '../src/sandbox/index.ts';
import { assertBuilt, codecall, lastJson } from './cli-fixture.ts';

describe('codecall doctor (the built CLI)', () => {
  beforeAll(() => assertBuilt());

  it('reports every driver, and python as this machine can run it', async () => {
    const probe = await probePython();
    const r = await codecall({}, 'doctor', '--json');
    const { checks } = lastJson(r.stdout) as { checks: { name: string; ok: boolean; detail: string }[] };
    const by = Object.fromEntries(checks.map((c) => [c.name, c]));
    expect(by.quickjs?.ok).toBe(true);
    expect(by.python?.ok).toBe(probe.ok);
    expect(r.code).toBe(probe.ok ? 0 : 1);
    if (probe.ok) expect(by.python?.detail).toContain(`cpython ${probe.python}`);
    // The python image: each installed package with its version; a missing one is a warning, not a failure.
    if (probe.ok) {
      expect(by.image?.ok).toBe(true);
      for (const [name, version] of Object.entries(probe.packages)) {
        if (version) expect(by.image?.detail).toContain(`${name} ${version}`);
        else expect(by.image?.detail).toMatch(new RegExp(`missing: .*${name}`));
      }
    }
  });

  it('says how to fix a missing bubblewrap', async () => {
    const r = await codecall({}, 'doctor', '--bwrap', '/nonexistent/bwrap');
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /FAIL python\s+bubblewrap \(bwrap\) was not found: install it \(Debian\/Ubuntu: apt-get install bubblewrap/,
    );
  });
});
