// `codecall toolformer run` end to end, as child processes: the bigram completions server on loopback (scores from
// the fixture's bigram model, sampled calls scripted), a Calculator from a defineTool module and a lookup tool from
// a real MCP server over stdio (test/support/mcp-test-server.ts). The kept set is what the fixture's losses say;
// a run killed mid-corpus (SIGKILL) and started again asks the model and runs the tools nothing again that was
// journaled.
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createPromptLogprobsClient } from '../src/model/index.ts';
import { inlineFormLine, scoreSample } from '../src/toolformer/index.ts';
import { assertBuilt, codecall, lastJson, startCodecall, until } from './cli-fixture.ts';
import { calls } from './support/mcp-call-log.ts';
import { estimateBigram } from './toolformer/bigram-model.ts';
import { startBigramServer, type BigramServer } from './toolformer/bigram-completions-server.ts';
import { divide } from './toolformer/fixtures/calculator-tools.ts';

const model = estimateBigram(
  readFileSync(new URL('./toolformer/fixtures/pipeline-corpus.txt', import.meta.url), 'utf8'),
);
const TOOLS_MODULE = 'test/toolformer/fixtures/calculator-tools.ts';

/** The calls the scripted model samples: by the tool its few-shot prompt is for and where the call opens. */
const SCRIPT: Record<string, Record<string, string[]>> = {
  Calculator: {
    '(or [': ['Calculator(400/1400)', 'Calculator(1400/400)', 'the answer is 0.29'],
    'only [': ['Calculator(1/0)'],
  },
  'lookup.search': {
    '(or [': ['lookup.search({"q":"zzz"})'],
    'only [': ['lookup.search({"q":"ban"})', 'lookup.search({"q":"app"})'],
  },
};

function complete(prompt: string): string[] {
  const tool = prompt.includes('Calculator API') ? 'Calculator' : 'lookup.search';
  for (const [end, texts] of Object.entries(SCRIPT[tool] ?? {})) if (prompt.endsWith(end)) return texts;
  // No choices at all: a malformed reply (MODEL_BAD_REPLY) that must drop only what it was for.
  return [];
}

const search = (q: string) => {
  const hits = ['apple', 'apricot', 'banana'].filter((x) => x.includes(q));
  return JSON.stringify({ hits, total: hits.length });
};
const RESULTS: Record<string, (input: string) => string> = {
  Calculator: (input) => String(divide(input)),
  'lookup.search': (input) => search((JSON.parse(input) as { q: string }).q),
};

function corpusLines(days: number): string[] {
  const out: string[] = [];
  for (let day = 1; day <= days; day++) {
    out.push(JSON.stringify({ text: `Day ${day}. Out of 1400 participants, 400 (or 29%) passed the test.` }));
    out.push(JSON.stringify({ text: `Day ${day}. Of the fruit we sell, only banana is yellow.` }));
  }
  return out;
}

let dir: string;
let servers: BigramServer[] = [];
beforeAll(async () => {
  assertBuilt();
  dir = await mkdtemp(join(tmpdir(), 'codecall-toolformer-run-'));
});
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});

async function server(delayMs?: number): Promise<BigramServer> {
  const s = await startBigramServer(model, {
    refuseZeroMaxTokens: true,
    complete,
    ...(delayMs ? { delayMs } : {}),
  });
  servers.push(s);
  return s;
}

async function mcpConfig(name: string, log: string): Promise<string> {
  const file = join(dir, `${name}-mcp.json`);
  await writeFile(
    file,
    JSON.stringify({
      mcpServers: [
        {
          name: 'lookup',
          command: process.execPath,
          args: ['--import', 'tsx', 'test/support/mcp-test-server.ts'],
          env: { MCP_CALL_LOG: log },
        },
      ],
    }),
  );
  return file;
}

function runArgs(name: string, baseUrl: string, config: string, more: string[] = []): string[] {
  return [
    'toolformer',
    'run',
    join(dir, `${name}.jsonl`),
    '--db',
    join(dir, `${name}.db`),
    '--tools',
    TOOLS_MODULE,
    '--mcp-config',
    config,
    '--tool',
    'Calculator',
    '--tool',
    'lookup.search',
    '--base-url',
    baseUrl,
    '--model',
    'bigram',
    '--out',
    join(dir, `${name}-kept.jsonl`),
    '--chat-out',
    join(dir, `${name}-chat.jsonl`),
    '--json',
    ...more,
  ];
}

/** The kept samples the fixture's losses call for: every scripted call run and scored in this process. */
async function expectedKept(texts: string[], baseUrl: string): Promise<string[]> {
  const client = createPromptLogprobsClient({ baseUrl, model: 'bigram' });
  const kept: string[] = [];
  for (const text of texts) {
    for (const [tool, byEnd] of Object.entries(SCRIPT)) {
      for (const [end, completions] of Object.entries(byEnd)) {
        const at = text.indexOf(end.slice(0, -2)) + end.length - 2;
        if (at < end.length - 2) continue;
        for (const completion of completions) {
          const input = /^[\w.]+\((.*)\)$/.exec(completion)?.[1];
          if (input === undefined || !completion.startsWith(`${tool}(`)) continue;
          let result: string;
          try {
            result = RESULTS[tool]?.(input) ?? '';
          } catch {
            continue;
          }
          const sample = { prefix: text.slice(0, at), continuation: text.slice(at), tool, input, result };
          if ((await scoreSample(client, sample)).keep) kept.push(inlineFormLine(sample));
        }
      }
    }
  }
  return kept;
}

describe('codecall toolformer run', () => {
  it('samples, runs a Calculator and an MCP lookup, keeps what the losses say, and reports per tool', async () => {
    const s = await server();
    const texts = corpusLines(1).map((l) => (JSON.parse(l) as { text: string }).text);
    await writeFile(
      join(dir, 'e2e.jsonl'),
      [...corpusLines(1), 'not json', JSON.stringify({ text: 'Nothing to compute here.' })].join('\n'),
    );
    const calcLog = join(dir, 'e2e-calc.log');
    const mcpLog = join(dir, 'e2e-mcp.log');
    const r = await codecall(
      { CALC_CALL_LOG: calcLog },
      ...runArgs('e2e', s.baseUrl, await mcpConfig('e2e', mcpLog)),
    );
    expect(r.code, r.stderr).toBe(0);
    // The last progress line: what was scored and kept, the rate, the share of the corpus done.
    expect(r.stderr).toMatch(
      /4 positions sampled, 5 samples scored, 2 kept, [\d.]+ samples\/s, 100% of the corpus/,
    );
    const kept = (await readFile(join(dir, 'e2e-kept.jsonl'), 'utf8')).trim().split('\n');
    const expected = await expectedKept(texts, s.baseUrl);
    expect(expected).toHaveLength(2);
    expect(kept.sort()).toEqual(expected.sort());
    const keptTexts = kept.map((l) => (JSON.parse(l) as { text: string }).text);
    expect(keptTexts).toContain(
      'Day 1. Out of 1400 participants, 400 (or [Calculator(400/1400) -> 0.29] 29%) passed the test.',
    );
    expect(keptTexts).toContain(
      'Day 1. Of the fruit we sell, only [lookup.search({"q":"ban"}) -> {"hits":\\["banana"\\],"total":1}] banana is yellow.',
    );
    const chat = (await readFile(join(dir, 'e2e-chat.jsonl'), 'utf8')).trim().split('\n');
    expect(chat).toHaveLength(2);
    const report = lastJson(r.stdout) as {
      counts: Record<
        string,
        { sampled: number; executed: number; kept: number; dropped: Record<string, number> }
      >;
      bad_lines: number;
      svg: string;
    };
    expect(report.bad_lines).toBe(1);
    // Calculator: 3 sampled after "(or" (one not a call), 1 after "only" (1/0 fails); the text without a
    // position gets no sample at all.
    expect(report.counts.Calculator).toMatchObject({
      sampled: 4,
      executed: 2,
      kept: 1,
      dropped: { 'bad-call': 1, filter: 1, TOOL_ERROR: 1 },
    });
    expect(report.counts['lookup.search']).toMatchObject({
      sampled: 3,
      executed: 3,
      kept: 1,
      dropped: { filter: 2 },
    });
    // The tools ran once per distinct call: 2 Calculator calls (one of them threw), 3 searches.
    expect((await readFile(calcLog, 'utf8')).trim().split('\n').sort()).toEqual([
      '1/0',
      '1400/400',
      '400/1400',
    ]);
    expect(await calls(mcpLog)).toHaveLength(3);
    const svg = await readFile(report.svg, 'utf8');
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg).toContain('5 scored, 2 kept');
    expect(svg).not.toMatch(/<script|href=/i);
  }, 120_000);
});

describe('codecall toolformer run after SIGKILL', () => {
  it('the same command resumes: same dataset, and no model request or tool call that was journaled is made again', async () => {
    const lines = corpusLines(4);
    await writeFile(join(dir, 'whole.jsonl'), lines.join('\n'));
    await writeFile(join(dir, 'killed.jsonl'), lines.join('\n'));
    const more = ['--shard-lines', '2', '--concurrency', '1'];

    // The reference: the same corpus run to its end without a crash.
    const a = await server();
    const wholeCalc = join(dir, 'whole-calc.log');
    const wholeMcp = join(dir, 'whole-mcp.log');
    const whole = await codecall(
      { CALC_CALL_LOG: wholeCalc },
      ...runArgs('whole', a.baseUrl, await mcpConfig('whole', wholeMcp), more),
    );
    expect(whole.code, whole.stderr).toBe(0);

    const b = await server(30);
    const calcLog = join(dir, 'killed-calc.log');
    const mcpLog = join(dir, 'killed-mcp.log');
    const args = runArgs('killed', b.baseUrl, await mcpConfig('killed', mcpLog), more);
    const first = startCodecall({ CALC_CALL_LOG: calcLog }, ...args);
    // Mid-corpus: about half of the model requests the whole run makes.
    await until(() => b.requests.length >= a.requests.length / 2, 120_000);
    first.child.kill('SIGKILL');
    await first.exited;
    expect(first.child.signalCode).toBe('SIGKILL');
    const atKill = b.requests.length;
    expect(atKill).toBeLessThan(a.requests.length);

    const resumed = await codecall({ CALC_CALL_LOG: calcLog }, ...args);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(await readFile(join(dir, 'killed-kept.jsonl'), 'utf8')).toBe(
      await readFile(join(dir, 'whole-kept.jsonl'), 'utf8'),
    );
    const report = (r: string) => (lastJson(r) as { counts: unknown }).counts;
    expect(report(resumed.stdout)).toEqual(report(whole.stdout));

    // Only the steps in flight at the kill are asked again (concurrency 1: one text and tool at a time, its calls
    // at one position side by side, three requests a score); everything journaled is served from the journal.
    const tally = (requests: Record<string, unknown>[]) => {
      const m = new Map<string, number>();
      for (const r of requests) m.set(JSON.stringify(r), (m.get(JSON.stringify(r)) ?? 0) + 1);
      return m;
    };
    const once = tally(a.requests);
    let repeated = 0;
    for (const [body, n] of tally(b.requests)) {
      const extra = n - (once.get(body) ?? 0);
      // Two calls at one position share their L_no_call text: both in flight, both asked again.
      expect(extra).toBeLessThanOrEqual(2);
      if (extra > 0) repeated += extra;
    }
    expect(repeated).toBeLessThanOrEqual(6);
    expect(b.requests.length - a.requests.length).toBe(repeated);
    const lineCount = async (file: string) =>
      (await readFile(file, 'utf8').catch(() => '')).split('\n').filter(Boolean).length;
    expect(await lineCount(calcLog)).toBeLessThanOrEqual((await lineCount(wholeCalc)) + 2);
    expect((await calls(mcpLog)).length).toBeLessThanOrEqual((await calls(wholeMcp)).length + 2);
  }, 300_000);
});

describe('codecall toolformer run with its model server down', () => {
  it('stops with the shard waiting (TOOL_UNAVAILABLE); the same command resumes it once the server is back', async () => {
    const gone = await startBigramServer(model);
    const port = Number(new URL(gone.baseUrl).port);
    await gone.close();
    await writeFile(join(dir, 'down.jsonl'), corpusLines(1).join('\n'));
    const args = runArgs(
      'down',
      `http://127.0.0.1:${port}/v1`,
      await mcpConfig('down', join(dir, 'down-mcp.log')),
    );
    const first = await codecall({}, ...args);
    expect(first.code).toBe(1);
    expect(first.stderr).toMatch(
      /shard 1 \(task toolformer-[0-9a-f]+\) paused \(needs_attention\): TOOL_UNAVAILABLE/,
    );
    expect(first.stderr).toContain('the same command resumes the run');
    servers.push(await startBigramServer(model, { refuseZeroMaxTokens: true, complete, port }));
    const second = await codecall({}, ...args);
    expect(second.code, second.stderr).toBe(0);
    const kept = (await readFile(join(dir, 'down-kept.jsonl'), 'utf8')).trim().split('\n');
    expect(kept).toHaveLength(2);
  }, 120_000);
});

describe('codecall toolformer sample', () => {
  it('writes the sampled calls of a plain-text corpus as candidates, counting unparsable ones', async () => {
    const s = await server();
    const corpus = join(dir, 'plain.txt');
    await writeFile(
      corpus,
      'Out of 1400 participants, 400 (or 29%) passed the test.\n\nOf the fruit we sell, only banana is yellow.\n',
    );
    const out = join(dir, 'sampled.jsonl');
    const r = await codecall(
      {},
      'toolformer',
      'sample',
      corpus,
      '--tool',
      'Calculator',
      '--base-url',
      s.baseUrl,
      '--model',
      'bigram',
      '--out',
      out,
      '--json',
    );
    expect(r.code, r.stderr).toBe(0);
    expect(lastJson(r.stdout)).toEqual({ texts: 2, positions: 2, sampled: 3, dropped: { 'bad-call': 1 } });
    const sampled = (await readFile(out, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      // Texts are sampled side by side: their lines may come in any order, a text's calls in sampling order.
      .sort((a, b) => (a.line as number) - (b.line as number));
    expect(sampled.map((c) => [c.line, c.input])).toEqual([
      [1, '400/1400'],
      [1, '1400/400'],
      [3, '1/0'],
    ]);
    expect(sampled[0]).toMatchObject({
      tool: 'Calculator',
      prefix: 'Out of 1400 participants, 400 (or',
      continuation: ' 29%) passed the test.',
    });
  }, 60_000);
});
