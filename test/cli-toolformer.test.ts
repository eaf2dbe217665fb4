// `codecall toolformer score` as a child process against the bigram completions server on loopback.
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatFormLine, inlineFormLine } from '../src/toolformer/index.ts';
import { assertBuilt, codecall, lastJson } from './cli-fixture.ts';
import { estimateBigram } from './toolformer/bigram-model.ts';
import { startBigramServer, type BigramServer } from './toolformer/bigram-completions-server.ts';

const model = estimateBigram(
  await readFile(new URL('./toolformer/fixtures/bigram-corpus.txt', import.meta.url), 'utf8'),
);
const useful = {
  prefix: 'Out of 1400 participants, 400 (or',
  continuation: ' 29%) passed the test.',
  tool: 'Calculator',
  input: '400/1400',
  result: '0.29',
};
const useless = { ...useful, prefix: 'The test was hard, and', input: '2+2', result: '4' };

let server: BigramServer;
let dir: string;
beforeAll(async () => {
  assertBuilt();
  server = await startBigramServer(model, { refuseZeroMaxTokens: true });
  dir = await mkdtemp(join(tmpdir(), 'codecall-toolformer-'));
});
afterAll(async () => {
  await server.close();
});

describe('codecall toolformer score', () => {
  it('streams candidates, keeps what the filter keeps in both forms, and counts the rest by reason', async () => {
    const candidates = join(dir, 'candidates.jsonl');
    await writeFile(
      candidates,
      [
        JSON.stringify(useless),
        'not json',
        JSON.stringify({ ...useful, continuation: '29%) passed the test.' }),
        '',
        JSON.stringify(useful),
      ].join('\n'),
    );
    const out = join(dir, 'kept.jsonl');
    const chatOut = join(dir, 'kept-chat.jsonl');
    const run = await codecall(
      {},
      'toolformer',
      'score',
      candidates,
      '--base-url',
      server.baseUrl,
      '--model',
      'bigram',
      '--out',
      out,
      '--chat-out',
      chatOut,
      '--concurrency',
      '2',
      '--json',
    );
    expect(run.stderr).toContain('toolformer: 4 read, 2 scored, 1 kept, 3 dropped');
    expect(run.code).toBe(0);
    expect(lastJson(run.stdout)).toEqual({
      read: 4,
      scored: 2,
      kept: 1,
      dropped: { filter: 1, 'bad-line': 1, TOOLFORMER_TOKEN_BOUNDARY: 1 },
    });
    expect(await readFile(out, 'utf8')).toBe(`${inlineFormLine(useful)}\n`);
    expect(await readFile(chatOut, 'utf8')).toBe(`${chatFormLine(useful)}\n`);
    // vLLM's preset: one new token asked for beside the echo, 3 requests for each of the 3 scorable lines.
    expect(server.requests.every((r) => r.echo === true && r.max_tokens === 1)).toBe(true);
  });

  it('says which file it cannot read or write', async () => {
    const missing = await codecall(
      {},
      'toolformer',
      'score',
      join(dir, 'missing.jsonl'),
      '--model',
      'm',
      '--out',
      join(dir, 'o.jsonl'),
    );
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('error INVALID_ARGUMENT: cannot read');
    const candidates = join(dir, 'c.jsonl');
    await writeFile(candidates, `${JSON.stringify(useful)}\n`);
    const unwritable = await codecall(
      {},
      'toolformer',
      'score',
      candidates,
      '--model',
      'm',
      '--out',
      join(dir, 'no/such/dir.jsonl'),
    );
    expect(unwritable.code).toBe(2);
    expect(unwritable.stderr).toContain('error INVALID_ARGUMENT: cannot write');
  });

  it('stops with the error when the server refuses the requests', async () => {
    const refusing = await startBigramServer(model, { refuseEcho: true });
    try {
      const candidates = join(dir, 'one.jsonl');
      await writeFile(candidates, `${JSON.stringify(useful)}\n`);
      const run = await codecall(
        {},
        'toolformer',
        'score',
        candidates,
        '--provider',
        'llamacpp',
        '--base-url',
        refusing.baseUrl,
        '--model',
        'm',
        '--out',
        join(dir, 'none.jsonl'),
      );
      expect(run.code).not.toBe(0);
      expect(run.stderr).toContain('MODEL_REQUEST_INVALID');
      expect(run.stderr).toContain('Only no echo is supported');
    } finally {
      await refusing.close();
    }
  });
});
