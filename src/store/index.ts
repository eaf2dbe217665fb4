export { createSqliteTaskStore } from './sqlite/create-sqlite-task-store.ts';
export type { SqliteTaskStoreOptions } from './sqlite/create-sqlite-task-store.ts';
export { SqliteTaskStore } from './sqlite/sqlite-task-store.ts';
export { MIGRATIONS, SCHEMA_VERSION } from './sqlite/migrations.ts';
export { canonicalJson, journalChecksum } from './journal-checksum.ts';
export { newTaskId } from './task-id.ts';
export { verifyStore } from './verify-store.ts';
export type { BrokenLink, StoreIntegrity } from './verify-store.ts';
