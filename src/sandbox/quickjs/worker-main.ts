import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { setPriority } from 'node:os';
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import { failure } from '../../errors/index.ts';
import { PAUSED_VM_CODES } from '../../spec/index.ts';
import { abortFailure } from '../early-failure.ts';
import { PreparedVm, VmTemplate } from './prepared-vm.ts';
import type { QuickJsModule } from './prepared-vm.ts';
import type { FromWorker, ToWorker, WorkerInit } from './protocol.ts';
import { AnswerWait } from './answer-wait.ts';
import { SpinGate } from './spin-gate.ts';
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
// Tool calls posted to the host and not yet answered; while one of a quick tool is out, the worker polls briefly
// for the answer instead of going to sleep (see pollForAnswers below).
const waits = new AnswerWait(init.spinMicros);
const gate = new SpinGate();
const post = (msg: FromWorker, transfer?: ArrayBuffer[]): void => {
  if (msg.type === 'call' && msg.tool >= 0) waits.sent(msg.execId, msg.callId, msg.tool, performance.now());
  if (transfer) port.postMessage(msg, transfer);
  else port.postMessage(msg);
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
/** Executions that keep their VM if aborted for a pause, with the largest image kept. */
const keepPaused = new Map<number, number>();
/** An instance ready for the next resume of a paused VM, once this worker has kept one (ADR 0056). */
let spare: Promise<PreparedVm | null> | null = null;

function takeSpare(): Promise<PreparedVm | null> {
  const taken = spare ?? Promise.resolve(null);
  spare = null;
  setImmediate(makeSpare);
  return taken;
}

function makeSpare(): void {
  if (spare) return;
  spare = PreparedVm.spare(template).catch(() => null);
}

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
    keepPaused.delete(msg.execId);
    waits.ended(msg.execId);
  });
  executions.set(msg.execId, exec);
  if (msg.keepPaused !== undefined) {
    keepPaused.set(msg.execId, msg.keepPaused);
    makeSpare();
  }
  const image = msg.resume;
  let vm: PreparedVm;
  try {
    vm = image
      ? await PreparedVm.resume(
          template,
          { ...image, extensions: [] },
          image.memoryBytes,
          image.deliverToken,
          (await takeSpare()) ?? undefined,
        )
      : await acquire(msg.limits.memoryBytes);
  } catch (e) {
    exec.fail(failure('SANDBOX_UNAVAILABLE', `could not create a QuickJS VM: ${(e as Error).message}`));
    return;
  }
  if (image) exec.resume(vm, msg, image);
  else exec.begin(vm, msg);
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
    case 'abort': {
      // The host's abort, as its driver made it from the reason; a pause may keep the VM first (ADR 0056).
      const exec = executions.get(msg.execId);
      const maxBytes = keepPaused.get(msg.execId);
      if (exec && maxBytes !== undefined && PAUSED_VM_CODES.has(msg.code)) exec.keepPaused(maxBytes);
      exec?.fail(abortFailure(msg));
      break;
    }
  }
}

/**
 * Waking a sleeping thread costs ~50 us on this kind of VM, which dominated a tool-call round trip. While a call
 * of a quick tool is outstanding the worker polls its port for up to `spinMicros`, so the answer is picked up at
 * once; a tool found slow is not polled for (answer-wait.ts), nor is any while the machine has no core to spare
 * (spin-gate.ts).
 */
function pollForAnswers(): void {
  if (init.spinMicros <= 0 || !waits.worthPolling || !gate.open(performance.now())) return;
  let limit = performance.now() + init.spinMicros / 1000;
  while (waits.worthPolling && performance.now() < limit) {
    const received = receiveMessageOnPort(port);
    if (received) {
      dispatch(received.message as ToWorker);
      const now = performance.now();
      if (!gate.open(now)) return;
      limit = now + init.spinMicros / 1000;
    }
  }
}

port.on('message', (msg: ToWorker) => {
  dispatch(msg);
  pollForAnswers();
});

refill();
await Promise.allSettled(warm);
post({ type: 'ready' });
