import { LIVE, TRIVIAL, toolLoop } from '../programs.ts';
import { ExecutionFailed } from '../system.ts';
import type { BenchSystem, HoldGate } from '../system.ts';

/** The slice of isolated-vm's API used here; typed locally because the package is optional. */
interface TransferOptions {
  copy?: boolean;
  reference?: boolean;
  promise?: boolean;
}
interface IvmContext {
  evalClosure(
    code: string,
    args: unknown[],
    options: { arguments?: TransferOptions; result?: TransferOptions; filename?: string },
  ): Promise<unknown>;
  release(): void;
}
interface IvmIsolate {
  createContext(): Promise<IvmContext>;
  dispose(): void;
}
interface IvmModule {
  Isolate: new (options: { memoryLimit: number }) => IvmIsolate;
  Reference: new (value: unknown) => unknown;
}

const NAME = 'isolated-vm';
const MEMORY_LIMIT_MB = 64;

/** Loads isolated-vm, or returns why it cannot be benchmarked here. */
export async function loadIsolatedVm(): Promise<IvmModule | string> {
  if (!process.execArgv.includes('--no-node-snapshot')) {
    return 'isolated-vm requires node --no-node-snapshot on Node 20+';
  }
  const specifier = 'isolated-vm';
  try {
    const loaded = (await import(specifier)) as { default?: IvmModule };
    return loaded.default ?? (loaded as unknown as IvmModule);
  } catch (error) {
    return `isolated-vm is not installed or did not build (${(error as Error).message.split('\n')[0]})`;
  }
}

/**
 * A new Isolate (64 MiB limit) and context per execution, disposed after it: isolated-vm's own advice
 * for untrusted code. `tools.echo` is an async Reference call whose result comes back as a promise.
 */
export function createIsolatedVmSystem(ivm: IvmModule): BenchSystem {
  const echoRef = new ivm.Reference((args: unknown) => args);
  const prelude = [
    'const $echo = $0;',
    'const tools = { echo: (args) => $echo.apply(undefined, [args], { arguments: { copy: true }, result: { promise: true, copy: true } }) };',
  ].join('\n');

  const execute = async (code: string, echo: unknown): Promise<unknown> => {
    const isolate = new ivm.Isolate({ memoryLimit: MEMORY_LIMIT_MB });
    try {
      const context = await isolate.createContext();
      return await context.evalClosure(`${prelude}\nreturn (async () => {\n${code}\n})();`, [echo], {
        result: { promise: true, copy: true },
      });
    } catch (error) {
      throw new ExecutionFailed(NAME, error);
    } finally {
      isolate.dispose();
    }
  };

  return {
    name: NAME,
    description: `isolated-vm@5.0.4, new Isolate (${MEMORY_LIMIT_MB} MiB limit) + context per execution, tools via Reference.apply (async)`,
    setup: () => Promise.resolve(),
    coldStart: () => execute(TRIVIAL, echoRef),
    trivial: () => execute(TRIVIAL, echoRef),
    toolLoop: (n) => execute(toolLoop(n), echoRef),
    liveExecution(gate: HoldGate) {
      const hold = new ivm.Reference(async (args: unknown) => {
        gate.arrived();
        await gate.released;
        return args;
      });
      return execute(LIVE, hold);
    },
    teardown: () => Promise.resolve(),
  };
}
