import { createQuickJsDriver } from '../../src/sandbox/quickjs/index.ts';
import { describeDriverConformance } from './driver-conformance.ts';
import { describeEscapeSuite } from './escape-suite.ts';

const options = {
  name: 'quickjs',
  createDriver: () => createQuickJsDriver({ workers: 2 }),
  language: 'javascript',
} as const;

describeDriverConformance(options);
describeEscapeSuite(options);
