import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { failure } from '../../errors/index.ts';
import { abortFailure } from '../early-failure.ts';
import { PreparedVm, VmTemplate } from './prepared-vm.ts';
import type { QuickJsModule } from './prepared-vm.ts';
import type { FromWorker, ToWorker, WorkerInit } from './protocol.ts';
import { AnswerWait } from './answer-wait.ts';
import { SPIN_PHASE_MICROS, SpinPolicy, TO_MAIN, TO_WORKER, awaitMessage, ring } from './doorbell.ts';
import { VmExecution } from './vm-execution.ts';
import { keepQuickJsExport, stripWasmExports } from './wasm-exports.ts';

// Entry point of a sandbox worker thread: keeps a few fresh VMs ready and runs executions in them.
if (!parentPort) throw new Error('worker-main must run in a worker thread');
const init = workerData as WorkerInit;
// On Linux a nice value is the calling thread's alone (elsewhere it would be the whole process's: left alone).
if (init.nice > 0 && process.platform === 'linux') {
  try {
    setPriority(init.nice);
  } catch {
    // Not allowed here (a sandboxed container): the thread runs at the process's priority.
  }
}
const port = init.port;
const flags = new Int32Array(init.interruptFlags);
const bells = new Int32Array(init.bells);
// Tool calls posted to the host and not yet answered; while one of a quick tool is out, the worker polls briefly
// for the answer instead of going to sleep (see pollForAnswers below).
const waits = new AnswerWait(init.spinMicros);
const post = (msg: FromWorker): void => {
  if (msg.type === 'call' && msg.tool >= 0) waits.sent(msg.execId, msg.callId, msg.tool, performance.now());
  port.postMessage(msg);
  ring(bells, TO_MAIN);
};

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
  const exec = new VmExecution(msg.execId, msg.slot, flags, msg.limits, msg.filename, post, () => {
    executions.delete(msg.execId);
    waits.ended(msg.execId);
  });
  executions.set(msg.execId, exec);
  let vm: PreparedVm;
  try {
    vm = await acquire(msg.limits.memoryBytes);
  } catch (e) {
    exec.fail(failure('SANDBOX_UNAVAILABLE', `could not create a QuickJS VM: ${(e as Error).message}`));
    return;
  }
  exec.begin(vm, msg);
}

function dispatch(msg: ToWorker): void {
  switch (msg.type) {
    case 'start':
      void start(msg);
      break;
    case 'deliver':
      waits.answered(msg.execId, msg.callId, performance.now());
      executions.get(msg.execId)?.deliver(msg.callId, msg.ok, msg.payload, msg.clockMs);
      break;
    case 'abort':
      // The host's abort, as its driver made it from the reason.
      executions.get(msg.execId)?.fail(abortFailure(msg));
      break;
  }
}

/**
 * Waking a sleeping event loop costs ~50 us on this kind of VM, which dominated a tool-call round trip. While a
 * call of a quick tool is outstanding the worker waits for its answer for up to `spinMicros` right here: spinning
 * on the port only while answers have lately come within the spin phase, asleep on the bell otherwise (ADR 0055),
 * so a loaded machine's main thread gets the core it needs to answer. A tool found slow is not waited for
 * (answer-wait.ts); every message received restarts the window.
 */
const workerSpin = new SpinPolicy(Math.min(init.spinMicros, SPIN_PHASE_MICROS) / 1000);
function pollForAnswers(): void {
  if (init.spinMicros <= 0) return;
  while (waits.worthPolling) {
    const received = awaitMessage(port, bells, TO_WORKER, workerSpin, init.spinMicros / 1000);
    if (!received) return;
    dispatch(received.message as ToWorker);
  }
}

port.on('message', (msg: ToWorker) => {
  dispatch(msg);
  pollForAnswers();
});

refill();
await Promise.allSettled(warm);
post({ type: 'ready' });
