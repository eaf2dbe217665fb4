import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { LIVE, TRIVIAL, toolLoop } from '../programs.ts';
import { ExecutionFailed } from '../system.ts';
import type { BenchSystem, HoldGate } from '../system.ts';

const NAME = 'node -e';

/** Child side: tools are IPC requests answered by the parent; the result goes back the same way. */
function childScript(code: string): string {
  return `
const pending = new Map();
let seq = 0;
process.on('message', (m) => { const r = pending.get(m.id); pending.delete(m.id); r(m.value); });
const tools = { echo: (args) => new Promise((resolve) => { const id = ++seq; pending.set(id, resolve); process.send({ id, args }); }) };
(async () => {
${code}
})().then(
  (value) => process.send({ done: true, value }, () => process.disconnect()),
  (error) => process.send({ done: true, error: String(error) }, () => process.disconnect()),
);`;
}

type Message =
  { done: true; value?: unknown; error?: string } | { done?: undefined; id: number; args: unknown };
type Echo = (args: unknown) => unknown;

const { NODE_OPTIONS: _ignored, ...childEnv } = process.env;

/** Spawns `node -e` per execution (no pool): the floor a process-per-execution design pays. */
export function createNodeSpawnSystem(): BenchSystem {
  const live = new Set<ChildProcess>();

  const execute = (code: string, echo: Echo): Promise<unknown> =>
    new Promise((resolve, reject) => {
      const child = spawn(process.execPath, ['-e', childScript(code)], {
        stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
        env: childEnv,
      });
      live.add(child);
      let outcome: { ok: true; value: unknown } | { ok: false; error: unknown } | undefined;
      child.on('message', (raw) => {
        const message = raw as Message;
        if (message.done) {
          outcome =
            message.error === undefined
              ? { ok: true, value: message.value }
              : { ok: false, error: message.error };
          return;
        }
        Promise.resolve(echo(message.args)).then(
          (value) => child.connected && child.send({ id: message.id, value }),
          (error: unknown) => reject(new ExecutionFailed(NAME, error)),
        );
      });
      child.on('error', (error) => reject(new ExecutionFailed(NAME, error)));
      // 'close' comes after both the exit and the end of the IPC channel, so the result message is in.
      child.on('close', (code) => {
        live.delete(child);
        if (outcome?.ok) resolve(outcome.value);
        else reject(new ExecutionFailed(NAME, outcome?.error ?? `exit code ${code}`));
      });
    });

  const echo: Echo = (args) => args;

  return {
    name: NAME,
    description: 'child_process.spawn(node -e) per execution; tool calls and the result are IPC messages',
    sizes: { coldSamples: 50, coldWarmup: 3, toolLoopN: 2000, toolLoopReps: 1, liveK: 50 },
    setup: () => Promise.resolve(),
    coldStart: () => execute(TRIVIAL, echo),
    trivial: () => execute(TRIVIAL, echo),
    toolLoop: (n) => execute(toolLoop(n), echo),
    liveExecution: (gate: HoldGate) =>
      execute(LIVE, async (args) => {
        gate.arrived();
        await gate.released;
        return args;
      }),
    /** Proportional set size of the live children: their share of memory, shared pages split fairly. */
    async externalMemoryBytes() {
      let total = 0;
      for (const child of live) {
        if (child.pid === undefined) continue;
        const rollup = await readFile(`/proc/${child.pid}/smaps_rollup`, 'utf8').catch(() => '');
        const pss = /^Pss:\s+(\d+) kB/m.exec(rollup);
        if (pss?.[1]) total += Number(pss[1]) * 1024;
      }
      return total;
    },
    teardown() {
      for (const child of live) child.kill();
      return Promise.resolve();
    },
  };
}
