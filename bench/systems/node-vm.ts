import vm from 'node:vm';
import { LIVE, TRIVIAL, toolLoop } from '../programs.ts';
import type { BenchSystem, HoldGate } from '../system.ts';

type Tools = { echo(args: unknown): Promise<unknown> };

const echoTools: Tools = { echo: (args) => Promise.resolve(args) };

/** Unsafe baseline: a new `node:vm` context per execution, tools as host async functions. */
export function createNodeVmSystem(): BenchSystem {
  const execute = async (code: string, tools: Tools): Promise<unknown> => {
    const context = vm.createContext({ tools });
    const completion = vm.runInContext(`(async () => {\n${code}\n})()`, context) as Promise<unknown>;
    return await completion;
  };
  return {
    name: 'node:vm',
    description:
      'new vm context per execution, program compiled each time, tools are host async functions (no isolation)',
    setup: () => Promise.resolve(),
    coldStart: () => execute(TRIVIAL, echoTools),
    trivial: () => execute(TRIVIAL, echoTools),
    toolLoop: (n) => execute(toolLoop(n), echoTools),
    liveExecution: (gate: HoldGate) =>
      execute(LIVE, {
        echo: async (args) => {
          gate.arrived();
          await gate.released;
          return args;
        },
      }),
    teardown: () => Promise.resolve(),
  };
}
