import { describe, expect, it } from 'vitest';
import { createPythonDriver, probePython } from '../../src/sandbox/index.ts';
import type { PythonDriver } from '../../src/sandbox/index.ts';
import { describeDriverConformance } from './driver-conformance.ts';
import { describeEscapeSuite } from './escape-suite.ts';

// The same conformance and escape suites with fork servers on (ADR 0061, opt-in): every pooled execution is forked
// by its sandbox's pre-loaded interpreter into namespaces of its own. A driver whose fork servers could not start
// falls back to fresh sandboxes, which would make this a second run of python.test.ts: the last test says so.
const probe = await probePython();
if (probe.ok) {
  const made: PythonDriver[] = [];
  const options = {
    name: 'python (fork servers)',
    createDriver: () => {
      const driver = createPythonDriver({ warm: 2, forkServer: true });
      made.push(driver);
      return driver;
    },
    language: 'python',
  } as const;
  describeDriverConformance(options);
  describeEscapeSuite(options);
  describe('python (fork servers) ran with fork servers', () => {
    it('no driver of these suites fell back to fresh sandboxes', () => {
      expect(made.length).toBeGreaterThan(0);
      expect(made.map((d) => d.forkServerFailure).filter((f) => f !== null)).toEqual([]);
    });
  });
} else {
  describe('python driver conformance with fork servers', () => {
    console.warn(`[conformance] python fork servers skipped: ${probe.reason}`);
    it.skip(`python fork-server conformance [${probe.reason}]`, () => undefined);
  });
}
