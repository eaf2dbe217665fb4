export { JournalingHost } from './journaling-host.ts';
export type { JournalingHostOptions } from './journaling-host.ts';
export { runJournaled } from './run-journaled.ts';
export type { RunJournaledOptions } from './run-journaled.ts';
