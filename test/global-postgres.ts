import type { TestProject } from 'vitest/node';
import { findPostgresBin, startPostgresCluster } from './support/postgres-cluster.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The PostgreSQL server the tests use, or null (then `postgresSkip` says why and how to run them). */
    postgresUrl: string | null;
    postgresSkip: string;
  }
}

/**
 * One PostgreSQL server for the whole run: CODECALL_TEST_POSTGRES_URL when set (.ci/run starts one), else a
 * throwaway cluster started here when the server is installed. Each store under test gets a schema of its own.
 */
export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const given = process.env.CODECALL_TEST_POSTGRES_URL;
  if (given !== undefined && given !== '') {
    project.provide('postgresUrl', given);
    project.provide('postgresSkip', '');
    return undefined;
  }
  if (findPostgresBin() === null) {
    project.provide('postgresUrl', null);
    project.provide(
      'postgresSkip',
      'PostgreSQL is not installed: apt-get install postgresql (the tests start a cluster), or set CODECALL_TEST_POSTGRES_URL',
    );
    return undefined;
  }
  const cluster = await startPostgresCluster();
  process.env.CODECALL_TEST_POSTGRES_URL = cluster.url;
  project.provide('postgresUrl', cluster.url);
  project.provide('postgresSkip', '');
  return () => cluster.stop();
}
