import { describe, it } from 'vitest';
import { createPythonDriver, probePython } from '../../src/sandbox/index.ts';
import { describeDriverConformance } from './driver-conformance.ts';
import { describeEscapeSuite } from './escape-suite.ts';

// The python driver needs bubblewrap and /usr/bin/python3 (`.ci/run` installs both); where they are missing the
// suites are skipped, saying why.
const probe = await probePython();
if (probe.ok) {
  const options = {
    name: 'python',
    createDriver: () => createPythonDriver({ warm: 2 }),
    language: 'python',
  } as const;
  describeDriverConformance(options);
  describeEscapeSuite(options);
} else {
  describe('python driver conformance', () => {
    console.warn(`[conformance] python driver skipped: ${probe.reason}`);
    it.skip(`python driver conformance [${probe.reason}]`, () => undefined);
  });
}
