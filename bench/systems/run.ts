import { createRunner, setMaxWorkers } from 'run';
import type { HostFunctions, RunLimits, RunResult } from 'run';
import { WORKERS } from '../config.ts';
import { LIVE, TRIVIAL, toolLoop } from '../programs.ts';
import { ExecutionFailed, Semaphore } from '../system.ts';
import type { BenchSystem, HoldGate } from '../system.ts';

const NAME = 'run';
const TIMEOUT_MS = 300_000;
const echoFunctions: HostFunctions = { tools: { echo: (args: never) => args } };

/**
 * `run` 2.1.5 through one long-lived `createRunner`. Its worker pool is process-global, one invocation
 * per worker thread, and it rejects (RunConcurrencyError) rather than queues past `setMaxWorkers`; so the
 * pool is capped at WORKERS like codecall's, and excess executions wait in a FIFO here.
 * A live execution occupies a whole worker, so the memory phase lifts the cap to the number held live.
 */
export function createRunSystem(): BenchSystem {
  const runner = createRunner({ limits: { timeoutMs: TIMEOUT_MS } });
  const slots = new Semaphore(WORKERS);

  const execute = async (
    source: string,
    hostFunctions: HostFunctions,
    limits?: RunLimits,
  ): Promise<unknown> => {
    const result: RunResult = await runner.run({ source, hostFunctions, ...(limits ? { limits } : {}) });
    if (result.status !== 'completed') throw new ExecutionFailed(NAME, result);
    return result.value;
  };
  const queued = (source: string, hostFunctions: HostFunctions, limits?: RunLimits): Promise<unknown> =>
    slots.use(() => execute(source, hostFunctions, limits));

  return {
    name: NAME,
    description: `run@2.1.5, one createRunner, setMaxWorkers(${WORKERS}) + FIFO queue in the adapter (run has none); memory phase: setMaxWorkers(K)`,
    async setup() {
      setMaxWorkers(WORKERS);
      // Start every pooled worker so the first samples do not pay for thread creation.
      await Promise.all(Array.from({ length: WORKERS }, () => queued(TRIVIAL, echoFunctions)));
    },
    coldStart: () => queued(TRIVIAL, echoFunctions),
    trivial: () => queued(TRIVIAL, echoFunctions),
    // maxBridgeRequests defaults to 256 tool calls per run.
    toolLoop: (n) => queued(toolLoop(n), echoFunctions, { maxBridgeRequests: n + 16 }),
    prepareLive(k: number) {
      setMaxWorkers(Math.max(WORKERS, k));
      return Promise.resolve();
    },
    liveExecution(gate: HoldGate) {
      const hold: HostFunctions = {
        tools: {
          echo: async (args: never) => {
            gate.arrived();
            await gate.released;
            return args;
          },
        },
      };
      return execute(LIVE, hold);
    },
    teardown() {
      setMaxWorkers(undefined);
      return Promise.resolve();
    },
  };
}
