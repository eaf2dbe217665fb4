import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createSqliteTaskStore } from '../../src/store/index.ts';
import { crashWhileOpen, mountSmallDisk, smallDiskUnavailable } from './small-disk.ts';

// A database that was never keyed, on a disk that is now read-only, with a key at hand: it opens (unkeyed: the
// keying is a write; the first writable open does it) and reads, as it did before the keyed chain (ADR 0030).

const skipped = smallDiskUnavailable === null ? '' : ` (skipped: ${smallDiskUnavailable})`;

describe.skipIf(smallDiskUnavailable !== null)(`the audit key on a read-only database${skipped}`, () => {
  it('opens and reads, the keying left for a writable open', async () => {
    const disk = mountSmallDisk(4 << 20);
    onTestFinished(() => disk.unmount());
    const path = join(disk.dir, 'tasks.db');
    const store = await createSqliteTaskStore({ path, auditKey: null });
    const task = await store.createTask({ kind: 'code', code: 'return 1', language: 'javascript', seed: 1 });
    await store.close();
    crashWhileOpen(path);
    disk.readOnly();
    const reader = await createSqliteTaskStore({ path, auditKey: Buffer.from('k'.repeat(64)) });
    try {
      expect((await reader.readAudit(task.id)).map((a) => a.type)).toEqual(['created']);
    } finally {
      await reader.close();
    }
  });
});
