import { detectCgroups } from '../sandbox/python/cgroups.ts';
import { createQuickJsDriver, probePython } from '../sandbox/index.ts';
import type { CliIo } from './cli-io.ts';

interface Check {
  readonly name: string;
  readonly ok: boolean;
  readonly detail: string;
}

/**
 * `codecall doctor`: which sandbox drivers work on this machine and why not, and what limits the python sandbox
 * can enforce (cgroups or rlimits). Exit code 0 when every driver works, 1 otherwise.
 */
export async function doctorCommand(options: { json?: boolean; bwrap?: string }, io: CliIo): Promise<number> {
  const checks: Check[] = [];
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
  if (options.json) io.stdout(`${JSON.stringify({ checks })}\n`);
  else for (const c of checks) io.stdout(`${c.ok ? 'ok  ' : 'FAIL'} ${c.name.padEnd(8)} ${c.detail}\n`);
  return checks.every((c) => c.ok) ? 0 : 1;
}
