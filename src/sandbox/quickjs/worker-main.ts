import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { parentPort, workerData } from 'node:worker_threads';
import { PreparedVm, VmTemplate } from './prepared-vm.ts';
import type { QuickJsModule } from './prepared-vm.ts';
import type { FromWorker, ToWorker, WorkerInit } from './protocol.ts';
import { VmExecution } from './vm-execution.ts';
import { keepQuickJsExport, stripWasmExports } from './wasm-exports.ts';

// Entry point of a sandbox worker thread: keeps a few fresh VMs ready and runs executions in them.
const port = parentPort;
if (!port) throw new Error('worker-main must run in a worker thread');
const init = workerData as WorkerInit;
const flags = new Int32Array(init.interruptFlags);
const post = (msg: FromWorker): void => port.postMessage(msg);

const wasmPath = createRequire(import.meta.url).resolve('quickjs-wasi/quickjs.wasm');
const wasm = (
  globalThis as unknown as { WebAssembly: { compile(bytes: Uint8Array): Promise<QuickJsModule> } }
).WebAssembly;
const template = await VmTemplate.build(
  await wasm.compile(stripWasmExports(await readFile(wasmPath), keepQuickJsExport)),
);

const warm: Promise<PreparedVm>[] = [];
const executions = new Map<number, VmExecution>();

function refill(): void {
  while (warm.length < init.warmVms) {
    const vm = PreparedVm.create(template, init.defaultMemoryBytes);
    vm.catch(() => undefined);
    warm.push(vm);
  }
}

function acquire(memoryBytes: number): Promise<PreparedVm> {
  if (memoryBytes === init.defaultMemoryBytes) {
    const next = warm.shift();
    setImmediate(refill);
    if (next) return next;
  }
  return PreparedVm.create(template, memoryBytes);
}

async function start(msg: Extract<ToWorker, { type: 'start' }>): Promise<void> {
  const exec = new VmExecution(msg.execId, msg.slot, flags, msg.limits, msg.filename, post, () =>
    executions.delete(msg.execId),
  );
  executions.set(msg.execId, exec);
  let vm: PreparedVm;
  try {
    vm = await acquire(msg.limits.memoryBytes);
  } catch (e) {
    exec.fail('SANDBOX_UNAVAILABLE', `could not create a QuickJS VM: ${(e as Error).message}`);
    return;
  }
  exec.begin(vm, msg);
}

port.on('message', (msg: ToWorker) => {
  switch (msg.type) {
    case 'start':
      void start(msg);
      break;
    case 'deliver':
      executions.get(msg.execId)?.deliver(msg.callId, msg.ok, msg.payload, msg.clockMs);
      break;
    case 'abort':
      executions.get(msg.execId)?.fail(msg.code, msg.message);
      break;
  }
});

refill();
await Promise.allSettled(warm);
post({ type: 'ready' });
