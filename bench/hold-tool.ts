// The resume benches' `hold` tool: the last call of a program, which waits until its execution is aborted (as a
// well-behaved tool does when a pause comes) unless `holding` is off. A pause may land before the tool starts (its
// intent is being committed), so an already aborted signal counts. `hold` starting tells that every earlier
// intent and its own are journaled (an intent commits before its tool runs): a bench waits for that instead of
// re-reading the journal while the task writes it, which cost O(n²) reads and starved the run on a busy machine.
import { defineTool } from '../dist/internal.js';

export interface HoldTool {
  readonly tool: ReturnType<typeof defineTool>;
  /** true: `hold` waits for an abort (a pause); false: it answers at once (the resumed run finishes). */
  holding: boolean;
  /** Resolves when `hold` next starts while holding. */
  started(): Promise<void>;
}

export function createHoldTool(): HoldTool {
  let held: (() => void) | undefined;
  const gate: HoldTool = {
    holding: true,
    started: () => new Promise<void>((resolve) => (held = resolve)),
    tool: defineTool({
      name: 'hold',
      description: '',
      effect: 'read',
      execute: (_args, ctx) => {
        if (!gate.holding) return 'released';
        held?.();
        held = undefined;
        return new Promise<string>((_resolve, reject) => {
          if (ctx.signal.aborted) reject(new Error('aborted'));
          ctx.signal.addEventListener('abort', () => reject(new Error('aborted')));
        });
      },
    }),
  };
  return gate;
}
