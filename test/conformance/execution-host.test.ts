// Both execution hosts against the execution host conformance suite: the tool registry's, and the journaling
// host over it (an empty journal: every call runs live and is journaled).
import { expect } from 'vitest';
import { JournalingHost } from '../../src/durable/journaling-host.ts';
import type { JournalEntryInput } from '../../src/spec/index.ts';
import { ToolRegistry } from '../../src/tools/index.ts';
import { describeExecutionHostConformance } from './execution-host-conformance.ts';

describeExecutionHostConformance('ToolRegistry', ({ tools, onLog }) =>
  new ToolRegistry(tools).host({ onLog }),
);

describeExecutionHostConformance('JournalingHost', ({ tools, onLog }) => {
  const journal: JournalEntryInput[] = [];
  return new JournalingHost({
    live: new ToolRegistry(tools).host({ onLog }),
    recorded: [],
    append: (entries) => {
      journal.push(...entries);
      return Promise.resolve();
    },
    effectOf: () => 'read',
    clock: () => 1_700_000_000_000,
    onLog,
    onFatal: (error) => {
      expect.fail(`the journaling host gave up: ${error.message}`);
    },
  });
});
