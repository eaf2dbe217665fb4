import { CodecallError } from '../errors/index.ts';
import { DEFAULT_MAX_RESULT_CHARS } from './execute-call.ts';
import type { ToolformerSample } from './chat-form.ts';
import { DEFAULT_TOOLFORMER_TAU, type SampleLosses } from './filter.ts';

/** The first line of a shard's program: its result becomes the shard's report and histogram artifacts. */
export const SHARD_PROGRAM_MARK = '// codecall toolformer: shard\n';

/** One line of a corpus shard: its number in the corpus and its text. */
export interface ShardLine {
  readonly number: number;
  readonly text: string;
}

export interface ShardProgramOptions {
  /** The tools calls are sampled for, as the program calls them (`tools['<name>']`). */
  readonly tools: readonly string[];
  /** (line, tool) pairs worked on at once; each has at most m calls in flight. Default 4. */
  readonly concurrency?: number;
  readonly maxResultChars?: number;
  /** The run's tau, returned with the counts so the shard's own report and histogram can be drawn. */
  readonly tau?: number;
}

/** Per tool: what was sampled, run, scored and kept, and the drops by reason. */
export interface ToolCounts {
  positions: number;
  sampled: number;
  executed: number;
  scored: number;
  kept: number;
  dropped: Record<string, number>;
}

/**
 * A kept sample as a shard's result holds it: where in which line (the text is the caller's; a result that copied
 * it for every sample could outgrow the task's result limit).
 */
export interface KeptSample {
  readonly line: number;
  /** The call goes before text[at]: prefix = text.slice(0, at), continuation = text.slice(at). */
  readonly at: number;
  readonly tool: string;
  readonly input: string;
  readonly arguments: Readonly<Record<string, unknown>>;
  readonly result: string;
  readonly delta: number;
  readonly losses: SampleLosses;
}

/** What a shard's task returns. */
export interface ShardOutput {
  readonly lines: number;
  readonly counts: Readonly<Record<string, ToolCounts>>;
  readonly kept: readonly KeptSample[];
  /** Every scored sample's delta L, by tool: `[tool, delta]`. */
  readonly deltas: readonly (readonly [string, number])[];
  /** The run's tau (programs written before it was returned have none: the default then). */
  readonly tau?: number;
}

/**
 * The program of one shard's durable task (JavaScript, run in the sandbox): for each (line, tool) pair, a few at a
 * time, the candidate positions, the calls sampled at each, each call run as the tool's own call
 * (`tools['<name>'](args)`) and each result scored. Every step is a tool call, so the journal holds the model's
 * answers and the tools' results: a resumed task replays them and asks or runs nothing again. A step that fails
 * drops what it was for, counted by its code; the steps of the run are in codecall's hands (a model server that is
 * down pauses the task, see pipeline-tools.ts).
 */
export function shardProgram(lines: readonly ShardLine[], options: ShardProgramOptions): string {
  const concurrency = options.concurrency ?? 4;
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 256) {
    throw new CodecallError('INVALID_ARGUMENT', 'concurrency must be an integer in 1..256');
  }
  if (options.tools.length === 0)
    throw new CodecallError('INVALID_ARGUMENT', 'name at least one tool to sample calls for');
  const data = {
    lines: lines.map((l) => ({ number: l.number, text: l.text })),
    tools: options.tools,
    concurrency,
    maxResultChars: options.maxResultChars ?? DEFAULT_MAX_RESULT_CHARS,
    tau: options.tau ?? DEFAULT_TOOLFORMER_TAU,
  };
  // The data is JSON, a JavaScript expression: nothing in a corpus line can end the literal.
  return `${SHARD_PROGRAM_MARK}const DATA = ${JSON.stringify(data)};\n${PROGRAM}`;
}

const PROGRAM = String.raw`
const counts = {};
const kept = [];
const deltas = [];
const count = (tool) => (counts[tool] ??= { positions: 0, sampled: 0, executed: 0, scored: 0, kept: 0, dropped: {} });
const drop = (tool, reason, n = 1) => {
  const d = count(tool).dropped;
  d[reason] = (d[reason] ?? 0) + n;
};
const codeOf = (e) => (e !== null && typeof e === 'object' && typeof e.code === 'string' ? e.code : 'TOOL_ERROR');
const textOf = (v) => (typeof v === 'string' ? v : v === undefined ? '' : (JSON.stringify(v) ?? ''));

async function call(line, tool, position, sampled) {
  const prefix = line.text.slice(0, position.at);
  const continuation = line.text.slice(position.at);
  let result;
  try {
    result = textOf(await tools[tool](sampled.arguments));
  } catch (e) {
    drop(tool, codeOf(e));
    return;
  }
  count(tool).executed++;
  if (result.length > DATA.maxResultChars) return drop(tool, 'result-too-long');
  let scored;
  try {
    scored = await toolformer.score({ prefix, continuation, tool, input: sampled.input, result });
  } catch (e) {
    return drop(tool, codeOf(e));
  }
  count(tool).scored++;
  deltas.push([tool, scored.delta]);
  if (!scored.keep) return drop(tool, 'filter');
  count(tool).kept++;
  kept.push({ line: line.number, at: position.at, tool, input: sampled.input, arguments: sampled.arguments, result, delta: scored.delta, losses: scored.losses });
}

async function work(line, tool) {
  count(tool);
  if (typeof tools[tool] !== 'function') return drop(tool, 'NO_SUCH_TOOL');
  let positions;
  try {
    positions = await toolformer.positions({ tool, text: line.text });
  } catch (e) {
    return drop(tool, codeOf(e));
  }
  count(tool).positions += positions.length;
  for (const position of positions) {
    let sampled;
    try {
      sampled = await toolformer.sample({ tool, text: line.text, at: position.at });
    } catch (e) {
      drop(tool, codeOf(e));
      continue;
    }
    count(tool).sampled += sampled.calls.length + sampled.bad.length;
    if (sampled.bad.length > 0) drop(tool, 'bad-call', sampled.bad.length);
    await Promise.all(sampled.calls.map((c) => call(line, tool, position, c)));
  }
}

const pairs = [];
for (const line of DATA.lines) for (const tool of DATA.tools) pairs.push([line, tool]);
let next = 0;
async function worker() {
  while (next < pairs.length) {
    const [line, tool] = pairs[next++];
    await work(line, tool);
  }
}
await Promise.all(Array.from({ length: Math.min(DATA.concurrency, pairs.length) }, worker));
kept.sort((a, b) => a.line - b.line || a.at - b.at || (a.tool < b.tool ? -1 : a.tool > b.tool ? 1 : 0) || (a.input < b.input ? -1 : a.input > b.input ? 1 : 0));
return { lines: DATA.lines.length, counts, kept, deltas, tau: DATA.tau };
`;

/** The kept samples of a shard's result with their text around the call, from the shard's own lines. */
export function keptSamples(
  output: ShardOutput,
  lines: readonly ShardLine[],
): (ToolformerSample & { readonly line: number; readonly delta: number; readonly losses: SampleLosses })[] {
  const byNumber = new Map(lines.map((l) => [l.number, l.text]));
  return output.kept.map((k) => {
    const text = byNumber.get(k.line);
    if (text === undefined || !(k.at > 0 && k.at < text.length)) {
      throw new CodecallError(
        'INVALID_ARGUMENT',
        `the shard's result names line ${k.line} at ${k.at}, not one of its lines`,
      );
    }
    const { at, ...rest } = k;
    void at;
    return { ...rest, prefix: text.slice(0, k.at), continuation: text.slice(k.at) };
  });
}
