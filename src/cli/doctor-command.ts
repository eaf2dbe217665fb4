import { detectCgroups } from '../sandbox/python/cgroups.ts';
import { createQuickJsDriver, IMAGE_PACKAGES, probePython } from '../sandbox/index.ts';
import type { CliIo } from './cli-io.ts';
import { storeCheck } from './doctor-store.ts';
import type { DoctorCheck } from './doctor-store.ts';

/** The Debian package of an image library (IMAGE_PACKAGES' distribution names). */
function debianPackage(name: string): string {
  return name === 'scikit-learn' ? 'python3-sklearn' : `python3-${name}`;
}

export interface DoctorOptions {
  readonly json?: boolean;
  readonly bwrap?: string;
  /** The database to check, else the configured one (CODECALL_DB, --config). */
  readonly db?: string;
  readonly config?: string;
}

/**
 * `codecall doctor`: which sandbox drivers work on this machine and why not, and what limits the python sandbox
 * can enforce (cgroups or rlimits), which of the python image's libraries are installed (a missing one is a
 * warning), and for a PostgreSQL database whether it answers. Exit code 0 when every check passes, 1 otherwise.
 */
export async function doctorCommand(
  options: DoctorOptions,
  io: CliIo,
  env: Readonly<Record<string, string | undefined>> = {},
): Promise<number> {
  const checks: DoctorCheck[] = [];
  const quickjs = createQuickJsDriver({ workers: 1, warmVmsPerWorker: 0 });
  try {
    await quickjs.ready();
    checks.push({ name: 'quickjs', ok: true, detail: `${quickjs.engine} (javascript, typescript)` });
  } catch (e) {
    checks.push({ name: 'quickjs', ok: false, detail: (e as Error).message });
  } finally {
    await quickjs.close();
  }
  const python = await probePython(options.bwrap ? { bwrap: options.bwrap } : {});
  checks.push(
    python.ok
      ? {
          name: 'python',
          ok: true,
          detail: `cpython ${python.python} in bubblewrap ${python.bwrap} (${python.pythonPath})`,
        }
      : { name: 'python', ok: false, detail: python.reason },
  );
  if (python.ok) {
    // The python image: the libraries programs reach for. A missing one is a warning, not a failure.
    const present = IMAGE_PACKAGES.filter((name) => python.packages[name]);
    const missing = IMAGE_PACKAGES.filter((name) => !python.packages[name]);
    const listed = present.map((name) => `${name} ${python.packages[name]}`).join(', ');
    const install = missing.length
      ? `${listed ? '; ' : ''}missing: ${missing.join(', ')} (apt-get install --no-install-recommends ${missing.map(debianPackage).join(' ')})`
      : '';
    checks.push({
      name: 'image',
      ok: true,
      detail: `${listed}${install}`,
      ...(missing.length ? { warning: true } : {}),
    });
  }
  const cgroups = await detectCgroups().catch((e: unknown) => ({
    manager: null,
    reason: (e as Error).message,
  }));
  checks.push(
    cgroups.manager
      ? { name: 'cgroups', ok: true, detail: `cgroup v${cgroups.manager.version} (memory, pids, freezer)` }
      : {
          name: 'cgroups',
          ok: true,
          detail: `not usable (${'reason' in cgroups ? cgroups.reason : 'unknown'}); python limits use rlimits`,
        },
  );
  const store = await storeCheck(options, env);
  if (store !== null) checks.push(store);
  if (options.json) io.stdout(`${JSON.stringify({ checks })}\n`);
  else
    for (const c of checks)
      io.stdout(`${c.ok ? (c.warning ? 'warn' : 'ok  ') : 'FAIL'} ${c.name.padEnd(8)} ${c.detail}\n`);
  return checks.every((c) => c.ok) ? 0 : 1;
}
