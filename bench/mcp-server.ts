// codecall as an MCP server in code mode (ADR 0049), against calling an upstream MCP server directly, in one run:
//
// - prompt size: the tool definitions an MCP client puts in the model's prompt for an upstream server of N tools
//   (its tools/list as JSON), against codecall's gateway (`codecall mcp --upstream`: two tools) and one typical
//   search_tools answer; N = 10, 100, 1,000. Tokens are estimated as bytes / 4.
// - a task of 20 calls: 20 tools/call round trips to the upstream server (what function calling does, model time
//   left out) against one `execute` whose program makes the 20 calls; round trips and wall time.
// - per call: 200 sequential calls, directly, against inside one `execute` ((its wall - an empty program's) / 200),
//   with tasks in memory (no --db) and in an SQLite file (--db: every call journaled with fsync), and of the same
//   tool in-process (bench/mcp-echo-tools.ts: no MCP hop), which tells codecall's part from the hop's.
//
// Usage: npm run bench:mcp (BENCH_QUICK=1 for fewer rounds). Needs dist/ (the script builds it).
import { mkdtemp, rm } from 'node:fs/promises';
import os, { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { busyShare } from './machine.ts';
import { median } from './stats.ts';

const QUICK = process.env.BENCH_QUICK === '1';
const ROUNDS = QUICK ? 3 : 7;
const root = new URL('..', import.meta.url).pathname;
const upstreamArgs = (n: number) => ['--import', 'tsx', join(root, 'bench/mcp-upstream.ts'), String(n)];

async function connect(command: string, args: string[]): Promise<Client> {
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command, args, cwd: root, stderr: 'ignore' }));
  return client;
}
const direct = (n: number) => connect(process.execPath, upstreamArgs(n));
/** `codecall mcp` over the in-process twin of `echo` (no MCP hop): `tools.echo`. */
const inProcess = () =>
  connect(process.execPath, [
    join(root, 'bin/codecall.js'),
    'mcp',
    '--tools',
    join(root, 'bench/mcp-echo-tools.ts'),
  ]);
const gateway = (n: number, db?: string) =>
  connect(process.execPath, [
    join(root, 'bin/codecall.js'),
    'mcp',
    '--upstream',
    `b=${process.execPath} ${upstreamArgs(n).join(' ')}`,
    ...(db === undefined ? [] : ['--db', db]),
  ]);

const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));
const tokens = (n: number) => Math.round(n / 4);

async function execute(client: Client, code: string): Promise<number> {
  const t0 = performance.now();
  const r = (await client.callTool({ name: 'execute', arguments: { code } })) as CallToolResult;
  const wall = performance.now() - t0;
  const status = (r.structuredContent as { status?: string } | undefined)?.status;
  if (status !== 'succeeded') throw new Error(`execute: ${JSON.stringify(r.content)}`);
  return wall;
}
const callsProgram = (k: number, tool = 'tools.b.echo') =>
  `for (let i = 0; i < ${k}; i++) await ${tool}({ i });\nreturn ${k};`;

async function directCalls(client: Client, k: number): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < k; i++) await client.callTool({ name: 'echo', arguments: { i } });
  return performance.now() - t0;
}

console.log(
  `machine: ${os.cpus()[0]?.model ?? '?'}, ${os.availableParallelism()} cores, Node ${process.version}`,
);
console.log(`busy before: ${((await busyShare(1000)) ?? 0).toFixed(2)}`);

// Prompt size.
console.log('\nprompt size (tool definitions the client gives its model), bytes / ~tokens');
console.log('N\tplain tools/list\tcode-mode pair\tone search_tools answer (5 tools)');
for (const n of [10, 100, 1000]) {
  const up = await direct(n);
  const gw = await gateway(n);
  try {
    const plain = bytes((await up.listTools()).tools);
    const pair = bytes((await gw.listTools()).tools);
    const found = (await gw.callTool({
      name: 'search_tools',
      arguments: { query: 'invoices export', limit: 5 },
    })) as CallToolResult;
    const answer = bytes(found.content);
    console.log(
      `${n}\t${plain} / ${tokens(plain)}\t${pair} / ${tokens(pair)}\t${answer} / ${tokens(answer)}\t(plain / pair: ${(plain / pair).toFixed(1)}x)`,
    );
  } finally {
    await up.close();
    await gw.close();
  }
}

// 20-call task and per-call overhead.
const dir = await mkdtemp(join(tmpdir(), 'codecall-bench-mcp-'));
const up = await direct(10);
const mem = await gateway(10);
const file = await gateway(10, join(dir, 'tasks.db'));
const local = await inProcess();
try {
  // Warm both paths (the sandbox's first VM, the SDK's first calls).
  await directCalls(up, 20);
  await execute(mem, callsProgram(20));
  await execute(file, callsProgram(20));
  await execute(local, callsProgram(20, 'tools.echo'));
  const twenty = { direct: [] as number[], mem: [] as number[], file: [] as number[] };
  const per = { direct: [] as number[], local: [] as number[], mem: [] as number[], file: [] as number[] };
  const K = 200;
  for (let r = 0; r < ROUNDS; r++) {
    twenty.direct.push(await directCalls(up, 20));
    twenty.mem.push(await execute(mem, callsProgram(20)));
    twenty.file.push(await execute(file, callsProgram(20)));
    per.direct.push((await directCalls(up, K)) / K);
    per.local.push(
      ((await execute(local, callsProgram(K, 'tools.echo'))) - (await execute(local, 'return 0'))) / K,
    );
    per.mem.push(((await execute(mem, callsProgram(K))) - (await execute(mem, 'return 0'))) / K);
    per.file.push(((await execute(file, callsProgram(K))) - (await execute(file, 'return 0'))) / K);
  }
  const ms = (xs: number[]) => median(xs).toFixed(1);
  const us = (xs: number[]) => (median(xs) * 1000).toFixed(0);
  console.log(`\na task of 20 calls (median of ${ROUNDS}): MCP round trips, wall ms`);
  console.log(`direct, 20 x tools/call\t20\t${ms(twenty.direct)}`);
  console.log(`codecall execute, in memory\t1\t${ms(twenty.mem)}`);
  console.log(`codecall execute, --db file\t1\t${ms(twenty.file)}`);
  console.log(`\nper call, ${K} sequential (median of ${ROUNDS}), us`);
  console.log(`direct\t${us(per.direct)}`);
  console.log(
    `codecall, in-process tool, in memory\t${us(per.local)}\t${(median(per.local) / median(per.direct)).toFixed(2)}x`,
  );
  console.log(`codecall, in memory\t${us(per.mem)}\t${(median(per.mem) / median(per.direct)).toFixed(2)}x`);
  console.log(`codecall, --db file\t${us(per.file)}\t${(median(per.file) / median(per.direct)).toFixed(2)}x`);
} finally {
  await up.close();
  await mem.close();
  await file.close();
  await local.close();
  await rm(dir, { recursive: true, force: true });
}
console.log(`\nbusy after: ${((await busyShare(1000)) ?? 0).toFixed(2)}`);
