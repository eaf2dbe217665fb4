// Agent benchmark (issue 5): code mode vs function-calling mode on one task that needs 10 tool calls, some
// independent and some dependent. The model is a policy behind a real local chat-completions server that answers
// after a fixed 300 ms; every tool takes 100 ms. Measures model round trips, wall time and tokens (estimated the
// same way for both modes: 4 characters per token of what is sent and received). Runs the built package (dist/).
// Usage: npm run bench:agent (BENCH_QUICK=1 for one run per mode).
//
// The task's calls form 7 levels: 3 weather lookups at once; then a flight search and an exchange rate at once;
// then seat map, booking, hotel, loyalty points and the itinerary, each needing the one before. A function-calling
// model that batches every independent call (its best case) needs 8 round trips (7 levels and the answer); a code
// model writes one program and ends it with final_answer: 1 round trip.
import os from 'node:os';
import {
  createAgent,
  createOpenAiClient,
  createQuickJsDriver,
  createRuntime,
  createSqliteTaskStore,
  defineTool,
  ToolRegistry,
} from '../dist/internal.js';
import type { AgentMode, ToolDefinition } from '../dist/internal.js';
import { isCodeMode, startScriptedModel } from './scripted-model.ts';
import type { ScriptedAnswer, ScriptedMessage, ScriptedRequest } from './scripted-model.ts';
import { median } from './stats.ts';

const QUICK = process.env.BENCH_QUICK === '1';
const RUNS = QUICK ? 1 : 5;
const MODEL_MS = 300;
const TOOL_MS = 100;
const CITIES = ['Oslo', 'Rome', 'Lima'];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const slow =
  <A, R>(fn: (args: A) => R) =>
  async (args: A): Promise<R> => {
    await sleep(TOOL_MS);
    return fn(args);
  };
const obj = (properties: Record<string, unknown>) => ({
  type: 'object',
  properties,
  required: Object.keys(properties),
  additionalProperties: false,
});
const str = { type: 'string' };
const num = { type: 'number' };

const tools: ToolDefinition[] = [
  defineTool({
    name: 'weather',
    description: 'Temperature in a city.',
    input: obj({ city: str }),
    effect: 'read',
    execute: slow(({ city }: { city: string }) => ({ city, temp_c: city.length * 5 })),
  }),
  defineTool({
    name: 'flights',
    description: 'Flights to a city.',
    input: obj({ to: str }),
    effect: 'read',
    execute: slow(({ to }: { to: string }) => [
      { id: `${to}-1`, eur: 320 },
      { id: `${to}-2`, eur: 280 },
    ]),
  }),
  defineTool({
    name: 'exchange_rate',
    description: 'Exchange rate between currencies.',
    input: obj({ from: str, to: str }),
    effect: 'read',
    execute: slow(() => ({ rate: 1.1 })),
  }),
  defineTool({
    name: 'seat_map',
    description: 'Free seats of a flight.',
    input: obj({ flight: str }),
    effect: 'read',
    execute: slow(({ flight }: { flight: string }) => ({ flight, free: ['12A', '14C'] })),
  }),
  defineTool({
    name: 'book_flight',
    description: 'Books a seat.',
    input: obj({ flight: str, seat: str }),
    effect: 'keyed',
    execute: slow(({ flight, seat }: { flight: string; seat: string }) => ({
      booking: `B-${flight}-${seat}`,
    })),
  }),
  defineTool({
    name: 'hotel',
    description: 'Books a hotel near the arrival of a booking.',
    input: obj({ booking: str }),
    effect: 'keyed',
    execute: slow(({ booking }: { booking: string }) => ({ hotel: `H-${booking}`, eur: 150 })),
  }),
  defineTool({
    name: 'loyalty_points',
    description: 'Points earned by a booking and a hotel.',
    input: obj({ booking: str, hotel: str }),
    effect: 'read',
    execute: slow(() => ({ points: 420 })),
  }),
  defineTool({
    name: 'send_itinerary',
    description: 'Sends the itinerary.',
    input: obj({ booking: str, hotel: str, usd: num, points: num }),
    effect: 'keyed',
    execute: slow((a: { booking: string }) => ({ sent: true, booking: a.booking })),
  }),
];

const PROGRAM = `const temps = await Promise.all(${JSON.stringify(CITIES)}.map((city) => tools.weather({ city })));
const warmest = temps.reduce((a, b) => (b.temp_c > a.temp_c ? b : a));
const [offers, fx] = await Promise.all([tools.flights({ to: warmest.city }), tools.exchange_rate({ from: 'EUR', to: 'USD' })]);
const cheapest = offers.reduce((a, b) => (b.eur < a.eur ? b : a));
const seats = await tools.seat_map({ flight: cheapest.id });
const { booking } = await tools.book_flight({ flight: cheapest.id, seat: seats.free[0] });
const stay = await tools.hotel({ booking });
const { points } = await tools.loyalty_points({ booking, hotel: stay.hotel });
const usd = Math.round((cheapest.eur + stay.eur) * fx.rate);
await tools.send_itinerary({ booking, hotel: stay.hotel, usd, points });
final_answer({ city: warmest.city, booking, hotel: stay.hotel, usd, points });`;

type Call = { name: string; args: Record<string, unknown> };

/** The function-calling policy: the next level's calls, from the tool results so far (by tool name). */
function nextCalls(messages: ScriptedMessage[]): Call[] | string {
  const results = new Map<string, unknown[]>();
  const names = new Map<string, string>();
  for (const m of messages) {
    for (const c of m.tool_calls ?? []) {
      names.set(c.id, c.function.name);
    }
    if (m.role === 'tool') {
      const name = names.get(m.tool_call_id ?? '') ?? '';
      results.set(name, [...(results.get(name) ?? []), JSON.parse(m.content ?? 'null') as unknown]);
    }
  }
  const one = <T>(name: string) => results.get(name)?.[0] as T;
  if (!results.has('weather')) return CITIES.map((city) => ({ name: 'weather', args: { city } }));
  const temps = results.get('weather') as { city: string; temp_c: number }[];
  const warmest = temps.reduce((a, b) => (b.temp_c > a.temp_c ? b : a));
  if (!results.has('flights')) {
    return [
      { name: 'flights', args: { to: warmest.city } },
      { name: 'exchange_rate', args: { from: 'EUR', to: 'USD' } },
    ];
  }
  const cheapest = one<{ id: string; eur: number }[]>('flights').reduce((a, b) => (b.eur < a.eur ? b : a));
  if (!results.has('seat_map')) return [{ name: 'seat_map', args: { flight: cheapest.id } }];
  const seat = one<{ free: string[] }>('seat_map').free[0] ?? '';
  if (!results.has('book_flight')) return [{ name: 'book_flight', args: { flight: cheapest.id, seat } }];
  const { booking } = one<{ booking: string }>('book_flight');
  if (!results.has('hotel')) return [{ name: 'hotel', args: { booking } }];
  const stay = one<{ hotel: string; eur: number }>('hotel');
  if (!results.has('loyalty_points'))
    return [{ name: 'loyalty_points', args: { booking, hotel: stay.hotel } }];
  const { points } = one<{ points: number }>('loyalty_points');
  const usd = Math.round((cheapest.eur + stay.eur) * one<{ rate: number }>('exchange_rate').rate);
  if (!results.has('send_itinerary')) {
    return [{ name: 'send_itinerary', args: { booking, hotel: stay.hotel, usd, points } }];
  }
  return JSON.stringify({ city: warmest.city, booking, hotel: stay.hotel, usd, points });
}

/** The model: the function-calling policy, or code mode's one program (then "Done."). */
function answer(body: ScriptedRequest): ScriptedAnswer {
  if (!isCodeMode(body)) return nextCalls(body.messages);
  const first = !body.messages.some((m) => m.role === 'assistant');
  return first ? `\`\`\`javascript\n${PROGRAM}\n\`\`\`` : 'Done.';
}

interface Run {
  wallMs: number;
  roundTrips: number;
  promptTokens: number;
  completionTokens: number;
  toolCalls: number;
  output: unknown;
}

async function main(): Promise<void> {
  const model = await startScriptedModel({ latencyMs: MODEL_MS, answer });
  const store = await createSqliteTaskStore({ path: ':memory:' });
  const driver = createQuickJsDriver({ workers: 1, warmVmsPerWorker: 1 });
  const registry = new ToolRegistry(tools);
  const runtime = createRuntime({
    store,
    drivers: [driver],
    tools: registry,
    agent: createAgent({
      model: createOpenAiClient({ provider: 'openai', baseUrl: model.baseUrl, model: 'bench-policy' }),
      tools: registry.definitions,
    }),
  });
  await driver.ready();
  const once = async (mode: AgentMode): Promise<Run> => {
    const started = performance.now();
    const { task_id } = await runtime.submit({
      instruction: 'Plan and book a trip to the warmest city.',
      mode,
    });
    const view = await runtime.run(task_id);
    const wallMs = performance.now() - started;
    if (view.status !== 'succeeded') throw new Error(`${mode}: ${view.status} ${JSON.stringify(view.error)}`);
    const steps = view.steps ?? [];
    return {
      wallMs,
      roundTrips: steps.length,
      promptTokens: steps.reduce((s, x) => s + (x.usage?.prompt_tokens ?? 0), 0),
      completionTokens: steps.reduce((s, x) => s + (x.usage?.completion_tokens ?? 0), 0),
      toolCalls: view.progress.tool_calls_completed,
      output: view.result?.output,
    };
  };
  const results: Record<AgentMode, Run[]> = { code: [], function_calling: [] };
  await once('code'); // warm-up: the first sandbox and HTTP connection
  for (let i = 0; i < RUNS; i++) {
    for (const mode of ['code', 'function_calling'] as const) results[mode].push(await once(mode));
  }
  await runtime.close();
  await driver.close();
  await store.close();
  model.close();

  const summary = (runs: Run[]) => ({
    roundTrips: median(runs.map((r) => r.roundTrips)),
    wallMs: median(runs.map((r) => r.wallMs)),
    promptTokens: median(runs.map((r) => r.promptTokens)),
    completionTokens: median(runs.map((r) => r.completionTokens)),
    toolCalls: median(runs.map((r) => r.toolCalls)),
  });
  const code = summary(results.code);
  const fc = summary(results.function_calling);
  // The function-calling model answers in text (here the JSON of the same object).
  const fcOutput = results.function_calling[0]?.output;
  const parsed: unknown = typeof fcOutput === 'string' ? JSON.parse(fcOutput) : fcOutput;
  const same = JSON.stringify(results.code[0]?.output) === JSON.stringify(parsed);
  console.log(
    `agent benchmark: ${RUNS} runs per mode (medians), model ${MODEL_MS} ms, tools ${TOOL_MS} ms; ` +
      `${os.availableParallelism()} x ${os.cpus()[0]?.model ?? 'cpu'}, node ${process.version}`,
  );
  console.log(
    `same answer in both modes: ${same ? 'yes' : 'NO'} (${JSON.stringify(results.code[0]?.output)})\n`,
  );
  const row = (name: string, pick: (s: typeof code) => number, unit = '') =>
    console.log(
      `${name.padEnd(18)} ${`${Math.round(pick(code))}${unit}`.padStart(10)} ${`${Math.round(pick(fc))}${unit}`.padStart(18)} ${(pick(code) / pick(fc)).toFixed(2).padStart(8)}`,
    );
  console.log(
    `${''.padEnd(18)} ${'code'.padStart(10)} ${'function_calling'.padStart(18)} ${'ratio'.padStart(8)}`,
  );
  row('tool calls', (s) => s.toolCalls);
  row('model round trips', (s) => s.roundTrips);
  row('wall time', (s) => s.wallMs, ' ms');
  row('prompt tokens', (s) => s.promptTokens);
  row('completion tokens', (s) => s.completionTokens);
  const ok = (x: number) => (x <= 1 / 3 ? 'met' : 'MISSED');
  console.log(
    `\ntargets (code at most 1/3 of function calling): round trips ${ok(code.roundTrips / fc.roundTrips)}, ` +
      `wall time ${ok(code.wallMs / fc.wallMs)}`,
  );
}

await main();
