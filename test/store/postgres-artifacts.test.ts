// The PostgreSQL store against the artifact store conformance suite.
import { describe, it } from 'vitest';
import { describeArtifactStoreConformance } from '../conformance/artifact-store-conformance.ts';
import { createTestPostgresStore, postgresSkipReason, postgresUrl } from '../support/postgres-store.ts';

if (postgresUrl() === null) {
  describe('PostgreSQL artifact store', () => {
    it.skip(postgresSkipReason(), () => undefined);
  });
} else {
  describeArtifactStoreConformance('PostgreSQL', () => createTestPostgresStore());
}
