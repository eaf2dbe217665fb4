import { MessageChannel, Worker, receiveMessageOnPort } from 'node:worker_threads';
import type { MessagePort } from 'node:worker_threads';
import type { FromWorker, ToWorker, WorkerInit } from './protocol.ts';
import { SpinGate } from './spin-gate.ts';

/** Executions one worker can hold at once (one interrupt flag each). */
export const SLOTS_PER_WORKER = 4096;

export interface WorkerListener {
  onMessage(msg: Exclude<FromWorker, { type: 'ready' }>): void;
  /** The thread died or was terminated; every execution on it is gone. */
  onExit(worker: SandboxWorker, reason: string): void;
}

export interface SandboxWorkerOptions {
  warmVms: number;
  defaultMemoryBytes: number;
  /** Heap of the worker's own JavaScript (not the guests', which live in Wasm memory). */
  maxOldGenerationMb: number;
  stackSizeMb: number;
  spinMicros: number;
  nice: number;
}

/** One sandbox thread, seen from the main thread: slots with interrupt flags, messages, and its death. */
export class SandboxWorker {
  readonly flags: Int32Array;
  readonly ready: Promise<void>;
  active = 0;
  private readonly worker: Worker;
  /** Our own channel (not the worker's built-in one) so the main thread can also poll it synchronously. */
  private readonly port: MessagePort;
  private readonly listener: WorkerListener;
  private markReady: () => void = () => undefined;
  private readonly freeSlots: number[] = [];
  private dead = false;
  /** Whether this thread may spin for the worker's next message (spin-gate.ts). */
  private readonly spin = new SpinGate();

  constructor(settings: SandboxWorkerOptions, listener: WorkerListener) {
    const buffer = new SharedArrayBuffer(SLOTS_PER_WORKER * Int32Array.BYTES_PER_ELEMENT);
    this.flags = new Int32Array(buffer);
    for (let i = SLOTS_PER_WORKER - 1; i >= 0; i--) this.freeSlots.push(i);
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    this.listener = listener;
    const init: WorkerInit = {
      port: port2,
      interruptFlags: buffer,
      warmVms: settings.warmVms,
      defaultMemoryBytes: settings.defaultMemoryBytes,
      spinMicros: settings.spinMicros,
      nice: settings.nice,
    };
    // From source (tests, tsx) the worker entry is TypeScript: load it through tsx's loader.
    const fromSource = import.meta.url.endsWith('.ts');
    const entry = new URL(fromSource ? './worker-main.ts' : './worker-main.js', import.meta.url);
    const options = {
      workerData: init,
      transferList: [port2],
      // Never inherit the parent's flags (e.g. `--import tsx`, which would load a loader into every worker).
      execArgv: [],
      stdout: false,
      stderr: false,
      resourceLimits: {
        maxOldGenerationSizeMb: settings.maxOldGenerationMb,
        stackSizeMb: settings.stackSizeMb,
      },
    };
    this.worker = fromSource
      ? new Worker(
          `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(entry.href)}); })`,
          { ...options, eval: true },
        )
      : new Worker(entry, options);
    this.worker.unref();
    this.ready = new Promise((resolve) => (this.markReady = resolve));
    this.port.on('message', (msg: FromWorker) => this.handle(msg));
    // Referenced until the worker is ready (someone may be awaiting `ready`), then only while busy.
    void this.ready.then(() => {
      if (this.active === 0) this.port.unref();
    });
    this.worker.on('error', (err) => this.die(listener, `the sandbox worker failed: ${err.message}`));
    this.worker.on('exit', (code) => {
      this.markReady();
      this.die(listener, `the sandbox worker exited with code ${code}`);
    });
  }

  get alive(): boolean {
    return !this.dead;
  }

  get hasFreeSlot(): boolean {
    return this.freeSlots.length > 0;
  }

  takeSlot(): number {
    const slot = this.freeSlots.pop();
    if (slot === undefined) throw new Error('no free execution slot');
    Atomics.store(this.flags, slot, 0);
    this.active += 1;
    // An idle pool must not keep the process alive; a busy one must.
    if (this.active === 1) {
      this.worker.ref();
      this.port.ref();
    }
    return slot;
  }

  releaseSlot(slot: number): void {
    Atomics.store(this.flags, slot, 0);
    this.freeSlots.push(slot);
    this.active -= 1;
    if (this.active === 0) {
      this.worker.unref();
      this.port.unref();
    }
  }

  /** Asks the execution in `slot` to stop at its next interrupt check, even inside a busy loop. */
  interrupt(slot: number): void {
    Atomics.store(this.flags, slot, 1);
  }

  send(msg: ToWorker, transfer?: ArrayBuffer[]): void {
    if (this.dead) return;
    if (transfer) this.port.postMessage(msg, transfer);
    else this.port.postMessage(msg);
  }

  /**
   * Waits up to `micros` for the worker's next message and handles it synchronously. Used right after a tool
   * outcome is delivered: a guest that answers with its next call at once is served without waking this thread.
   */
  pollOnce(micros: number): void {
    const start = performance.now();
    if (!this.spin.open(start)) return;
    const limit = start + micros / 1000;
    while (!this.dead && performance.now() < limit) {
      const received = receiveMessageOnPort(this.port);
      if (received) {
        this.handle(received.message as FromWorker);
        return;
      }
    }
  }

  private handle(msg: FromWorker): void {
    if (msg.type === 'ready') this.markReady();
    else this.listener.onMessage(msg);
  }

  terminate(): Promise<number> {
    this.port.close();
    return this.worker.terminate();
  }

  private die(listener: WorkerListener, reason: string): void {
    if (this.dead) return;
    this.dead = true;
    listener.onExit(this, reason);
  }
}
