import { defineTool } from '../../../src/internal.ts';
import type { ToolDefinition } from '../../../src/internal.ts';

// The tools the peers' tests hand their executors, as codecall tools (any object input).
const anyInput = { type: 'object' } as const;
const tool = (name: string, execute: (input: Record<string, unknown>) => unknown): ToolDefinition =>
  defineTool({
    name,
    description: name,
    input: anyInput,
    execute: (input: Record<string, unknown>) => execute(input),
  });

export const peerTools: ToolDefinition[] = [
  tool('add', ({ a, b }) => Number(a) + Number(b)),
  tool('add_two', ({ x }) => Number(x) + 2),
  tool('double', ({ n }) => ({ doubled: Number(n) * 2 })),
  tool('noArgs', () => []),
  tool('getWeather', () => ({ temp: 72 })),
  tool('searchWeb', ({ query }) => ({ results: [`news about ${String(query)}`] })),
  tool('slow', ({ id }) => ({ id })),
  tool('getSecret', () => ({ key: 'api-key-123' })),
  tool('github_list_issues', () => [{ id: 1, title: 'bug' }]),
  tool('date', () => new Date(0)),
  tool('lookup-user', ({ id }) => ({ id })),
  tool('catalog', () => ({
    concepts: [
      { name: 'first', recommendedNextAction: 'open' },
      { name: 'second', recommendedNextAction: undefined },
    ],
  })),
  tool('nothing', () => undefined),
  defineTool({
    name: 'stream',
    description: 'an AI SDK streaming tool: its final output is its last value',
    input: anyInput,
    execute: async function* () {
      yield { step: 1 };
      yield await Promise.resolve({ step: 2 });
    },
  }),
  tool('fail', () => {
    throw new Error('tool error');
  }),
];
