/**
 * The test data others wrote (../shared/data from the project's root; a worktree one level deeper looks one more
 * level up). Undefined when it is not there: the tests that need it skip and say why.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

export function sharedDataDir(): string | undefined {
  const candidates = [
    process.env.CODECALL_SHARED_DATA,
    resolve('../shared/data'),
    resolve('../../shared/data'),
  ];
  return candidates.find((dir): dir is string => dir !== undefined && existsSync(resolve(dir, 'README.md')));
}
