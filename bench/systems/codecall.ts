// The built package (dist/, what `npm install` produces and users run), not the TypeScript sources: from source
// the sandbox workers would load through tsx's loader.
import { ToolRegistry, createQuickJsDriver, defineTool, runProgram } from '../../dist/internal.js';
import type { ExecutionLimits, RunProgramOptions, SandboxDriver } from '../../dist/internal.js';
import { WORKERS } from '../config.ts';
import { LIVE, TRIVIAL, toolLoop } from '../programs.ts';
import { ExecutionFailed } from '../system.ts';
import type { BenchSystem, HoldGate } from '../system.ts';

const TIMEOUT_MS = 300_000;

type Toolset = RunProgramOptions['tools'];

function echoTool(execute: (args: unknown) => unknown) {
  return defineTool({
    name: 'echo',
    description: 'returns its arguments',
    input: { type: 'object' },
    effect: 'read',
    execute,
  });
}

export interface CodecallSystemOptions {
  /**
   * Pass a new `tools: [echo]` array on every call (the inline style of the shortest examples) instead of
   * one long-lived ToolRegistry, so `runProgram` has to build a registry for each call.
   */
  toolsArrayPerCall?: boolean;
  warmVmsPerWorker?: number;
}

/** codecall: `runProgram` on the quickjs driver with WORKERS worker threads. */
export function createCodecallSystem(options: CodecallSystemOptions = {}): BenchSystem {
  const perCall = options.toolsArrayPerCall === true;
  const name = perCall ? 'codecall (tools array)' : 'codecall';
  const echo = echoTool((args) => args);
  const registry = new ToolRegistry([echo]);
  const tools = (): Toolset => (perCall ? [echo] : registry);
  const holdRegistries = new WeakMap<HoldGate, ToolRegistry>();
  let driver: SandboxDriver | undefined;

  const execute = async (code: string, toolset: Toolset, limits?: Partial<ExecutionLimits>) => {
    if (!driver) throw new Error(`${name}: setup() did not run`);
    const result = await runProgram({ driver, code, tools: toolset, ...(limits ? { limits } : {}) });
    if (result.status !== 'succeeded') throw new ExecutionFailed(name, result.error);
    return result.value;
  };

  return {
    name,
    description:
      `createQuickJsDriver({ workers: ${WORKERS}${options.warmVmsPerWorker === undefined ? '' : `, warmVmsPerWorker: ${options.warmVmsPerWorker}`} }), ` +
      (perCall
        ? 'a new tools: [echo] array passed on every runProgram call'
        : 'one long-lived ToolRegistry([echo]) passed to runProgram'),
    ...(perCall
      ? {
          skip: {
            toolLoop: 'same execution path as codecall once started; only the per-call registry differs',
            memory: 'same execution path as codecall once started; only the per-call registry differs',
          },
        }
      : {}),
    async setup() {
      const created = createQuickJsDriver({
        workers: WORKERS,
        ...(options.warmVmsPerWorker === undefined ? {} : { warmVmsPerWorker: options.warmVmsPerWorker }),
        // BENCH_WORKER_HEAP_MB compares worker heap sizes (default: the driver's own).
        ...(process.env.BENCH_WORKER_HEAP_MB
          ? { workerHeapMb: Number(process.env.BENCH_WORKER_HEAP_MB) }
          : {}),
      });
      driver = created;
      const ready = (created as { ready?: () => Promise<void> }).ready;
      if (typeof ready === 'function') await ready.call(created);
    },
    coldStart: () => execute(TRIVIAL, tools()),
    trivial: () => execute(TRIVIAL, tools()),
    toolLoop: (n) => execute(toolLoop(n), tools(), { maxToolCalls: n + 16, timeoutMs: TIMEOUT_MS }),
    liveExecution(gate: HoldGate) {
      let hold = holdRegistries.get(gate);
      if (!hold) {
        hold = new ToolRegistry([
          echoTool(async (args) => {
            gate.arrived();
            await gate.released;
            return args;
          }),
        ]);
        holdRegistries.set(gate, hold);
      }
      return execute(LIVE, hold, { timeoutMs: TIMEOUT_MS });
    },
    async teardown() {
      await driver?.close();
    },
  };
}
