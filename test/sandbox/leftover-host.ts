// A host process for python-leftovers.test.ts: runs one hostile program on a python driver (without cgroups
// unless argv[4] is "cgroups"), ends it the way argv[2] says (success, error, timeout, abort, crash) and prints
// what happened. Run as root or as
// another uid, so that the test sees both; for "crash" the test SIGKILLs this process once the program is ready.
import { createPythonDriver } from '../../src/sandbox/index.ts';
import type { HostOutcome } from '../../src/spec/index.ts';
import { leftoverProgram } from './leftover-program.ts';

const [end = 'success', tag = 'ccleft', cgroups = 'none'] = process.argv.slice(2);
const driver = createPythonDriver({ warm: 0, cgroups: cgroups === 'cgroups' });
const controller = new AbortController();
const result = await driver.execute(
  {
    code: leftoverProgram(tag, end),
    language: 'python',
    tools: [{ namespace: 'tools', name: 'ready' }],
    host: {
      call: () => {
        process.stdout.write('READY\n');
        if (end === 'abort') controller.abort({ code: 'CANCELLED', message: 'the test aborted it' });
        // For "crash" the answer never comes: the test kills this process meanwhile.
        return end === 'crash'
          ? new Promise<HostOutcome>(() => undefined)
          : Promise.resolve({ ok: true, value: null });
      },
    },
    limits: { timeoutMs: end === 'timeout' ? 2_000 : 30_000 },
  },
  { signal: controller.signal },
);
process.stdout.write(`RESULT ${JSON.stringify(result)}\n`);
await driver.close();
