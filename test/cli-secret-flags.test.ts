// A secret given as a flag is in the process list (`ps`, /proc/PID/cmdline): every such flag's help says so and
// names the environment variable (or the config file) to use instead.
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, codecall } from './cli-fixture.ts';

beforeAll(() => assertBuilt());

// Commander wraps help text at the terminal width: compare with whitespace collapsed.
const flat = (text: string): string => text.replace(/\s+/g, ' ');

describe('secret flags warn about ps in --help', () => {
  it.each([
    [['serve', '--help'], '--webhook-secret', 'CODECALL_WEBHOOK_SECRET'],
    [['serve', '--help'], '--api-key', 'CODECALL_API_KEY'],
    [['run', '--help'], '--api-key', 'OPENAI_API_KEY'],
    [['toolformer', 'score', '--help'], '--api-key', 'OPENAI_API_KEY'],
    [['toolformer', 'sample', '--help'], '--api-key', 'OPENAI_API_KEY'],
    [['toolformer', 'run', '--help'], '--api-key', 'OPENAI_API_KEY'],
    [['tasks', 'list', '--help'], '--key', 'CODECALL_KEY'],
    [['tasks', 'submit', '--help'], '--key', 'CODECALL_KEY'],
  ])('%j: %s', async (args, flag, variable) => {
    const { code, stdout } = await codecall({}, ...args);
    expect(code).toBe(0);
    // The flag's own entry: its line and the wrapped lines under it, up to the next option's line.
    const lines = stdout.split('\n');
    const at = lines.findIndex((l) => l.trimStart().startsWith(`${flag} <`));
    expect(at).toBeGreaterThanOrEqual(0);
    const end = lines.findIndex((l, i) => i > at && /^\s+-/.test(l));
    const own = flat(lines.slice(at, end === -1 ? undefined : end).join(' '));
    expect(own).toMatch(/visible in `ps`/);
    expect(own).toContain(variable);
  });
});
