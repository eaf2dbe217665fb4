import { QuickJS } from 'quickjs-wasi';
import type { JSValueHandle } from 'quickjs-wasi';

/** A compiled quickjs.wasm `WebAssembly.Module` (the TypeScript lib for Node has no WebAssembly types). */
export type QuickJsModule = object;
import { GUEST_RUNTIME_SOURCE } from './guest-runtime.ts';

const STACK_EXHAUSTED_BELOW = 64 * 1024;

/** What a running execution offers the VM's host callbacks. */
export interface VmGuestHooks {
  shouldInterrupt(): boolean;
  onCall(kind: string, namespace: string, name: string, payload: string): number;
  onLog(level: string, message: string): void;
  onDone(ok: boolean, payload: string): void;
}

/**
 * A fresh QuickJS VM (its own Wasm instance) with the guest runtime installed and intrinsics frozen,
 * waiting for exactly one execution. Never reused.
 */
export class PreparedVm {
  /** The clock the guest reads (epoch ms); moved by the host only at deliveries. */
  clockMs = 0;
  hooks: VmGuestHooks | null = null;
  start!: JSValueHandle;
  run!: JSValueHandle;
  deliver!: JSValueHandle;
  vm!: QuickJS;
  private disposed = false;

  constructor(readonly memoryBytes: number) {}

  static async create(module: QuickJsModule, memoryBytes: number): Promise<PreparedVm> {
    const p = new PreparedVm(memoryBytes);
    p.vm = await QuickJS.create({
      wasm: module as never,
      memoryLimit: memoryBytes,
      timezoneOffset: 0,
      interruptHandler: () => p.hooks?.shouldInterrupt() ?? false,
      wasi: (memory: { buffer: ArrayBuffer }) => ({
        clock_time_get(_id: number, _precision: bigint, resultPtr: number): number {
          new DataView(memory.buffer).setBigUint64(
            resultPtr,
            BigInt(Math.floor(p.clockMs)) * 1_000_000n,
            true,
          );
          return 0;
        },
        random_get(ptr: number, len: number): number {
          new Uint8Array(memory.buffer, ptr, len).fill(0);
          return 0;
        },
      }),
    });
    p.install();
    return p;
  }

  private install(): void {
    const vm = this.vm;
    const str = (h: JSValueHandle | undefined): string =>
      h !== undefined && vm.typeof(h) === 'string' ? h.toString() : '';
    const call = vm.newFunction('__cc_call', (...args) => {
      const id = this.hooks?.onCall(str(args[0]), str(args[1]), str(args[2]), str(args[3])) ?? 0;
      return vm.newNumber(id);
    });
    const log = vm.newFunction('__cc_log', (...args) => {
      this.hooks?.onLog(str(args[0]), str(args[1]));
      return vm.undefined;
    });
    const done = vm.newFunction('__cc_done', (...args) => {
      const ok = args[0] !== undefined && vm.typeof(args[0]) === 'boolean' && args[0].toBoolean();
      this.hooks?.onDone(ok, str(args[1]));
      return vm.undefined;
    });
    const factory = vm.evalCode(GUEST_RUNTIME_SOURCE, '<codecall-runtime>');
    const runtime = vm.callFunction(factory, vm.undefined, call, log, done);
    factory.dispose();
    call.dispose();
    log.dispose();
    done.dispose();
    this.start = runtime.getProp('start');
    this.run = runtime.getProp('run');
    this.deliver = runtime.getProp('deliver');
    runtime.dispose();
  }

  /**
   * The Wasm shadow stack sits below the heap and QuickJS cannot check its depth on WASI, so deep
   * recursion ends in a trap; a stack pointer near zero at the trap says that is what happened.
   */
  stackExhausted(): boolean {
    const exports = (this.vm as unknown as { exports?: { __stack_pointer?: { value: unknown } } }).exports;
    const sp = exports?.__stack_pointer?.value;
    return typeof sp === 'number' && sp < STACK_EXHAUSTED_BELOW;
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.hooks = null;
    try {
      this.vm.dispose();
    } catch {
      // A VM that trapped may fail to tear down cleanly; its Wasm instance is dropped either way.
    }
  }
}
