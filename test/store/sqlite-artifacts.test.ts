// The SQLite store against the artifact store conformance suite.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { createSqliteTaskStore } from '../../src/store/index.ts';
import { describeArtifactStoreConformance } from '../conformance/artifact-store-conformance.ts';

let dir = '';
let fileCount = 0;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'codecall-artifacts-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describeArtifactStoreConformance('SQLite', () =>
  createSqliteTaskStore({ path: join(dir, `a-${++fileCount}.db`) }),
);
