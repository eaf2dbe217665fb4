// codecall as an MCP client (issue 22, ADR 0047), in one run, as ratios (bench/mcp-server.ts measures the other
// direction, codecall as a server):
// 1. the cost of one MCP tool call through codecall (a program in the quickjs sandbox calling tools.b.echo, and
//    the same from a durable task, each call journaled) against the SDK's own client calling the same server, all
//    over stdio (target: codecall < 1.3x the SDK); beside them, what bounds the ratio: the same `echo` as a host
//    tool (the sandbox's crossing alone, no MCP hop), and the MCP tool's `execute` called on the main thread (the
//    client path without the sandbox), with the process's CPU time per call (all its threads; the server's
//    process is not counted);
// 2. a task of 20 dependent MCP calls (each call's argument comes from the answer before, so a function-calling
//    model cannot batch them) in code mode against function-calling mode, with a scripted model behind a real
//    chat-completions server (model round trips, wall time).
// A durable task's rows: the store in memory, and a SQLite file (each append a commit). With
// BENCH_BASELINE_DIST=/path/to/other/dist the durable file row is also run by that build, interleaved (an A/B of a
// change of the durable layer: the same server, the same program, its own runtime and driver).
// Usage: npm run bench:mcp (BENCH_QUICK=1 for fewer rounds).
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  connectMcpServers,
  createAgent,
  createOpenAiClient,
  createQuickJsDriver,
  createRuntime,
  createSqliteTaskStore,
  runProgram,
  ToolRegistry,
} from '../dist/internal.js';
import type { AgentMode, McpServerConfig } from '../dist/internal.js';
import * as internal from '../dist/internal.js';
import { busyShare } from './machine.ts';
import { isCodeMode, startScriptedModel } from './scripted-model.ts';
import type { ScriptedAnswer, ScriptedRequest } from './scripted-model.ts';
import { median } from './stats.ts';

const QUICK = process.env.BENCH_QUICK === '1';
const CALLS = QUICK ? 200 : 1000;
const ROUNDS = QUICK ? 3 : 5;
const WALK = 20;
const MODEL_MS = 200;
const UPSTREAM = ['--import', 'tsx', new URL('./mcp-upstream.ts', import.meta.url).pathname, '10'];
const serverConfig: McpServerConfig = { name: 'b', command: process.execPath, args: UPSTREAM };

console.log(
  `mcp client benchmark: ${os.availableParallelism()} x ${os.cpus()[0]?.model ?? 'cpu'}, node ${process.version}, ` +
    `busy ${String(await busyShare(1000))} before the run`,
);

// 1. One call's cost.
const sdk = new Client({ name: 'bench', version: '1.0.0' });
await sdk.connect(new StdioClientTransport({ command: process.execPath, args: UPSTREAM, stderr: 'inherit' }));
/** Wall ms per call; the process's CPU us per call goes to `cpu[name]`. */
const cpu: Record<string, number[]> = {};
async function perCall(name: string, run: () => Promise<void>): Promise<number> {
  const c0 = process.cpuUsage();
  const t = performance.now();
  await run();
  const wall = (performance.now() - t) / CALLS;
  const c = process.cpuUsage(c0);
  (cpu[name] ??= []).push((c.user + c.system) / CALLS);
  return wall;
}
const sdkCalls = () =>
  perCall('sdk', async () => {
    for (let i = 0; i < CALLS; i++) await sdk.callTool({ name: 'echo', arguments: { i } });
  });

const mcp = await connectMcpServers({ servers: [serverConfig] });
const driver = createQuickJsDriver({ workers: 1, warmVmsPerWorker: 1 });
await driver.ready();
const loop = `let s = 0; for (let i = 0; i < ${CALLS}; i++) s += (await tools.b.echo({ i })).i; return s;`;
const echo = mcp.tools.find((t) => t.name === 'b.echo');
if (!echo) throw new Error('no b.echo');
// The same tool answered in-process: what the sandbox's crossing costs with no MCP hop behind it.
const hostEcho = [{ ...echo, execute: (a: unknown) => ({ ok: true, i: (a as { i: number }).i }) }];
const guestCalls = (tools = mcp.tools, name = 'guest') =>
  perCall(name, async () => {
    const r = await runProgram({ driver, code: loop, tools, limits: { timeoutMs: 600_000 } });
    if (r.status !== 'succeeded') throw new Error(`${r.error.code}: ${r.error.message}`);
  });
const hostCalls = () => guestCalls(hostEcho, 'host');
const callSignal = new AbortController().signal;
const executeCalls = () =>
  perCall('execute', async () => {
    for (let i = 0; i < CALLS; i++) await echo.execute({ i }, { signal: callSignal, callId: `call-${i}` });
  });

const store = await createSqliteTaskStore({ path: ':memory:' });
const registry = new ToolRegistry(mcp.tools);
const model = await startScriptedModel({ latencyMs: MODEL_MS, answer });
const runtime = createRuntime({
  store,
  drivers: [driver],
  tools: registry,
  pollMs: 5,
  agent: createAgent({
    model: createOpenAiClient({ provider: 'openai', baseUrl: model.baseUrl, model: 'bench-policy' }),
    tools: registry.definitions,
  }),
});
runtime.start();
const durableCalls = () =>
  perCall('durable', async () => {
    const task = await runtime.submit({ code: loop, limits: { timeoutMs: 600_000 } });
    const done = await runtime.wait(task.task_id, { until: 'terminal' });
    if (done.status !== 'succeeded') throw new Error(JSON.stringify(done.error));
  });

/** A runtime over a SQLite file of its own, built from `lib` (this build's internal.js, or the baseline's). */
type Lib = typeof internal;
async function fileRuntime(lib: Lib, name: string) {
  const dir = mkdtempSync(join(os.tmpdir(), `codecall-bench-mcp-${name}-`));
  const libMcp = await lib.connectMcpServers({ servers: [serverConfig] });
  const libDriver = lib.createQuickJsDriver({ workers: 1, warmVmsPerWorker: 1 });
  await libDriver.ready();
  const libStore = await lib.createSqliteTaskStore({ path: join(dir, 'tasks.db') });
  const rt = lib.createRuntime({
    store: libStore,
    drivers: [libDriver],
    tools: new lib.ToolRegistry(libMcp.tools),
    pollMs: 5,
  });
  rt.start();
  return {
    run: () =>
      perCall(name, async () => {
        const task = await rt.submit({ code: loop, limits: { timeoutMs: 600_000 } });
        const done = await rt.wait(task.task_id, { until: 'terminal' });
        if (done.status !== 'succeeded') throw new Error(JSON.stringify(done.error));
      }),
    close: async () => {
      await rt.close();
      await libDriver.close();
      await libStore.close();
      await libMcp.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
const fileRun = await fileRuntime(internal, 'durableFile');
const baselineDist = process.env.BENCH_BASELINE_DIST;
const baseRun = baselineDist
  ? await fileRuntime((await import(join(baselineDist, 'internal.js'))) as Lib, 'baselineFile')
  : null;

const paths = {
  sdk: sdkCalls,
  execute: executeCalls,
  host: hostCalls,
  guest: () => guestCalls(),
  durable: durableCalls,
  durableFile: fileRun.run,
  ...(baseRun ? { baselineFile: baseRun.run } : {}),
};
type Path = keyof typeof paths;
for (const run of Object.values(paths)) await run();
for (const k of Object.keys(cpu)) cpu[k] = [];
const samples = Object.fromEntries(Object.keys(paths).map((k) => [k, [] as number[]])) as Record<
  string,
  number[]
>;
const loads: string[] = [];
for (let r = 0; r < ROUNDS; r++) {
  loads.push((os.loadavg()[0] ?? 0).toFixed(1));
  // Interleaved, in turned order every other round.
  const order = Object.keys(paths) as Path[];
  for (const k of r % 2 === 0 ? order : order.reverse()) {
    const run = paths[k];
    if (run) (samples[k] ??= []).push(await run());
  }
}
const us = (k: string): number => median(samples[k] ?? []) * 1000;
console.log(`\n1. one MCP call over stdio, ${CALLS} sequential calls, median of ${ROUNDS} rounds:`);
for (const [name, k] of [
  ["the SDK's client, directly", 'sdk'],
  ["codecall's MCP tool, execute() on the main thread", 'execute'],
  ['the same echo as a host tool in the sandbox', 'host'],
  ['codecall: a program in the sandbox (runProgram)', 'guest'],
  ['codecall: a durable task, each call journaled', 'durable'],
  ['the same, tasks in a SQLite file', 'durableFile'],
  ...(baseRun ? ([['the same, the baseline build', 'baselineFile']] as const) : []),
] as const) {
  const cpuUs = median(cpu[k] ?? []);
  console.log(
    `${name.padEnd(50)} ${us(k).toFixed(0).padStart(6)} us  ${(us(k) / us('sdk')).toFixed(2)}x  cpu ${cpuUs.toFixed(0).padStart(4)} us`,
  );
}
console.log(
  `target: the program in the sandbox < 1.3x the SDK: ${us('guest') / us('sdk') < 1.3 ? 'met' : 'MISSED'}; ` +
    `its floor, the SDK's call plus a host tool's crossing: ${((us('sdk') + us('host')) / us('sdk')).toFixed(2)}x`,
);
console.log(`load average (1 min) at each round: ${loads.join(' ')}`);

// 2. Twenty dependent calls, code mode against function calling.
const WALK_PROGRAM = `let i = 0, total = 0;
for (let k = 0; k < ${WALK}; k++) { i = (await tools.b.echo({ i: i * 2 + 1 })).i; total += i; }
final_answer({ last: i, total });`;

function answer(body: ScriptedRequest): ScriptedAnswer {
  if (isCodeMode(body)) {
    const first = !body.messages.some((m) => m.role === 'assistant');
    return first ? `\`\`\`javascript\n${WALK_PROGRAM}\n\`\`\`` : 'Done.';
  }
  const results = body.messages
    .filter((m) => m.role === 'tool')
    .map((m) => JSON.parse(m.content ?? 'null') as { i: number });
  if (results.length < WALK) return [{ name: 'b_echo', args: { i: (results.at(-1)?.i ?? 0) * 2 + 1 } }];
  return JSON.stringify({ last: results.at(-1)?.i, total: results.reduce((s, r) => s + r.i, 0) });
}

async function walk(mode: AgentMode): Promise<{ wallMs: number; roundTrips: number; output: unknown }> {
  const t = performance.now();
  const { task_id } = await runtime.submit({
    instruction: `Follow ${WALK} echoes and add them up.`,
    mode,
    maxSteps: WALK + 5,
  });
  const view = await runtime.wait(task_id, { until: 'terminal' });
  if (view.status !== 'succeeded') throw new Error(`${mode}: ${view.status} ${JSON.stringify(view.error)}`);
  return { wallMs: performance.now() - t, roundTrips: view.steps?.length ?? 0, output: view.result?.output };
}

await walk('code');
const walks = {
  code: [] as Awaited<ReturnType<typeof walk>>[],
  function_calling: [] as Awaited<ReturnType<typeof walk>>[],
};
for (let r = 0; r < (QUICK ? 1 : 3); r++) {
  for (const mode of ['code', 'function_calling'] as const) walks[mode].push(await walk(mode));
}
const fcOut = walks.function_calling[0]?.output;
const same =
  JSON.stringify(walks.code[0]?.output) ===
  JSON.stringify(typeof fcOut === 'string' ? JSON.parse(fcOut) : fcOut);
console.log(
  `\n2. a task of ${WALK} dependent MCP calls, model ${MODEL_MS} ms per answer (medians); same answer: ${same ? 'yes' : 'NO'}`,
);
for (const [name, pick] of [
  ['model round trips', (w: { roundTrips: number }) => w.roundTrips],
  ['wall time (ms)', (w: { wallMs: number }) => w.wallMs],
] as const) {
  const code = median(walks.code.map(pick));
  const fc = median(walks.function_calling.map(pick));
  console.log(
    `${name.padEnd(20)} code ${code.toFixed(0).padStart(6)}  function calling ${fc.toFixed(0).padStart(6)}  ${(code / fc).toFixed(2)}x`,
  );
}

await runtime.close();
await fileRun.close();
await baseRun?.close();
await driver.close();
await store.close();
await mcp.close();
await sdk.close();
model.close();
