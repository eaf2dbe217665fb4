import { CompileFlags, QuickJS } from 'quickjs-wasi';
import type { JSValueHandle, QuickJSOptions, Snapshot } from 'quickjs-wasi';
import { computeDelta, fillSpare, instantiateSpare, restoreWithDelta } from './fast-restore.ts';
import type { MemoryDelta } from './fast-restore.ts';
import { GUEST_INTL_SOURCE } from './guest-intl.ts';
import { GUEST_RUNTIME_SOURCE } from './guest-runtime.ts';
import { GUEST_URL_SOURCE } from './guest-url.ts';
import { GUEST_WEB_SOURCE } from './guest-web.ts';
import { GUEST_EVENTS_SOURCE } from './guest-events.ts';
import { GUEST_BASE64_SOURCE } from './guest-base64.ts';
import { GUEST_FETCH_SOURCE } from './guest-fetch.ts';
import { answerIntl, callIntl, compareIntl } from './intl-host.ts';
import { answerBytes } from './bytes-host.ts';

/** A compiled quickjs.wasm `WebAssembly.Module` (the TypeScript lib for Node has no WebAssembly types). */
export type QuickJsModule = object;

const STACK_EXHAUSTED_BELOW = 64 * 1024;
const HOST_CALLBACKS = [
  '__cc_call',
  '__cc_log',
  '__cc_done',
  '__cc_intl',
  '__cc_intl_call',
  '__cc_intl_compare',
  '__cc_bytes',
  '__cc_cancel',
] as const;
/** Where the template parks the runtime's entry points; deleted before any guest code runs. */
const RUNTIME_GLOBAL = '__cc_runtime';
/** Source text only: a guest's Function.prototype.toString of a runtime function says [native code]. */
const STRIP = CompileFlags.STRIP_SOURCE;

/**
 * The guest runtime's and the web APIs' bytecode, compiled in a VM of its own and without their source text (line
 * tables stay, for stack traces): the template holds what runs, not the source or the parser's garbage, and every
 * VM restored from it copies that many fewer pages (measured: 544 KiB, 612 KiB with the runtime's source).
 */
async function compileGuest(module: QuickJsModule): Promise<{ runtime: Uint8Array; web: Uint8Array }> {
  const vm = await QuickJS.create({ wasm: module as never });
  try {
    return {
      runtime: vm.compile(GUEST_RUNTIME_SOURCE, '<codecall-runtime>', 0, STRIP),
      web: vm.compile(
        `[${GUEST_WEB_SOURCE}, ${GUEST_URL_SOURCE}, ${GUEST_INTL_SOURCE}, ${GUEST_EVENTS_SOURCE}, ${GUEST_BASE64_SOURCE}, ${GUEST_FETCH_SOURCE}]`,
        '<codecall-web>',
        0,
        STRIP,
      ),
    };
  } finally {
    vm.dispose();
  }
}

/** What a running execution offers the VM's host callbacks. */
export interface VmGuestHooks {
  shouldInterrupt(): boolean;
  /** `tool` indexes the request's tool bindings; -1 is a timer. Returns the call id. */
  onCall(tool: number, payload: string): number;
  onLog(level: string, message: string): void;
  /** The guest gave up on call `callId` (its fetch's signal aborted). */
  onCancel(callId: number): void;
  onDone(ok: boolean, payload: string): void;
}

/**
 * A VM snapshot with the guest runtime installed and the intrinsics frozen. Building it costs ~10 ms (freezing
 * walks ~800 objects); restoring it into a fresh Wasm instance costs about as much as creating a bare VM.
 */
export class VmTemplate {
  private constructor(
    readonly module: QuickJsModule,
    readonly snapshot: Snapshot,
    readonly delta: MemoryDelta | null,
  ) {}

  static async build(module: QuickJsModule): Promise<VmTemplate> {
    const code = await compileGuest(module);
    const vm = await QuickJS.create({ wasm: module as never, timezoneOffset: 0 });
    try {
      const callbacks = HOST_CALLBACKS.map((name) => vm.newFunction(name, () => vm.undefined));
      const extensions = vm.evalBytecode(code.web);
      const factory = vm.evalBytecode(code.runtime);
      const runtime = vm.callFunction(factory, vm.undefined, ...callbacks, extensions);
      vm.setProp(vm.global, RUNTIME_GLOBAL, runtime);
      for (const h of [extensions, factory, runtime, ...callbacks]) h.dispose();
      vm.runGC();
      const snapshot = vm.snapshot();
      return new VmTemplate(module, snapshot, await computeDelta(module, snapshot));
    } finally {
      vm.dispose();
    }
  }
}

/** A fresh VM (its own Wasm instance) restored from the template, waiting for exactly one execution. */
export class PreparedVm {
  /** The clock the guest reads (epoch ms); moved by the host only at deliveries. */
  clockMs = 0;
  hooks: VmGuestHooks | null = null;
  start!: JSValueHandle;
  run!: JSValueHandle;
  deliver!: JSValueHandle;
  vm!: QuickJS;
  /** Time `create` took (restoring the template into a fresh Wasm instance). */
  createMs = 0;
  private disposed = false;

  /** A spare instance (`spare`), until a paused VM is restored into it. */
  private bare: Awaited<ReturnType<typeof instantiateSpare>> = null;

  private constructor(public memoryBytes: number) {}

  static async create(template: VmTemplate, memoryBytes: number): Promise<PreparedVm> {
    const started = performance.now();
    const p = new PreparedVm(memoryBytes);
    p.vm = await restoreWithDelta(template.snapshot, template.delta, p.options(template, memoryBytes));
    p.attach();
    p.createMs = performance.now() - started;
    return p;
  }

  /**
   * A VM restored from the image of a paused one (ADR 0056): its guest waits where it paused. `deliverToken` is
   * the host's handle on the runtime's `deliver`, exported before the image was taken.
   */
  static async resume(
    template: VmTemplate,
    image: Snapshot,
    memoryBytes: number,
    deliverToken: number,
    spare?: PreparedVm,
  ): Promise<PreparedVm> {
    const started = performance.now();
    const bare = spare?.bare;
    const p = bare && spare ? spare : new PreparedVm(memoryBytes);
    p.memoryBytes = memoryBytes;
    const options = p.options(template, memoryBytes);
    p.bare = null;
    p.vm = bare ? fillSpare(bare, image, options) : await restoreWithDelta(image, null, options);
    p.registerCallbacks();
    p.deliver = p.vm.importHandle(deliverToken);
    p.createMs = performance.now() - started;
    return p;
  }

  /** An instance made ahead for `resume` (null when quickjs-wasi's internals are unavailable). */
  static async spare(template: VmTemplate): Promise<PreparedVm | null> {
    const p = new PreparedVm(0);
    p.bare = await instantiateSpare(p.options(template, 0));
    return p.bare ? p : null;
  }

  /**
   * The image of this VM between guest turns, with the token of its `deliver` handle (kept alive in the image),
   * for `resume`.
   */
  image(): { snapshot: Snapshot; deliverToken: number } {
    const deliverToken = this.vm.exportHandle(this.deliver);
    return { snapshot: this.vm.snapshot(), deliverToken };
  }

  private options(template: VmTemplate, memoryBytes: number): QuickJSOptions {
    return {
      wasm: template.module as never,
      memoryLimit: memoryBytes,
      timezoneOffset: 0,
      interruptHandler: () => this.hooks?.shouldInterrupt() ?? false,
      wasi: (memory: { buffer: ArrayBuffer }) => ({
        clock_time_get: (_id: number, _precision: bigint, resultPtr: number): number => {
          new DataView(memory.buffer).setBigUint64(
            resultPtr,
            BigInt(Math.floor(this.clockMs)) * 1_000_000n,
            true,
          );
          return 0;
        },
        random_get(ptr: number, len: number): number {
          new Uint8Array(memory.buffer, ptr, len).fill(0);
          return 0;
        },
      }),
    };
  }

  private attach(): void {
    this.registerCallbacks();
    const vm = this.vm;
    const runtime = vm.global.getProp(RUNTIME_GLOBAL);
    vm.evalCode(`delete globalThis.${RUNTIME_GLOBAL}`).dispose();
    this.start = runtime.getProp('start');
    this.run = runtime.getProp('run');
    this.deliver = runtime.getProp('deliver');
    runtime.dispose();
  }

  private registerCallbacks(): void {
    const vm = this.vm;
    // Only the guest runtime's closure holds these callbacks, so argument types are known; still, never
    // convert a non-string (that could run guest code).
    const str = (h: JSValueHandle | undefined): string =>
      h !== undefined && vm.typeof(h) === 'string' ? h.toString() : '';
    const num = (h: JSValueHandle | undefined): number =>
      h !== undefined && vm.typeof(h) === 'number' ? h.toNumber() : NaN;
    // The trampoline takes its own reference to what a callback returns and never frees ours: each fresh handle
    // is freed at the next callback (by then it was taken), or it would stay in the VM's heap until the VM ends.
    let returned: JSValueHandle | null = null;
    const give = (h: JSValueHandle): JSValueHandle => {
      returned?.dispose();
      returned = h;
      return h;
    };
    vm.registerHostCallback('__cc_call', (...args) =>
      give(vm.newNumber(this.hooks?.onCall(num(args[0]), str(args[1])) ?? 0)),
    );
    vm.registerHostCallback('__cc_cancel', (...args) => {
      this.hooks?.onCancel(num(args[0]));
      return vm.undefined;
    });
    vm.registerHostCallback('__cc_log', (...args) => {
      this.hooks?.onLog(str(args[0]), str(args[1]));
      return vm.undefined;
    });
    // Pure: answered here by this process's ICU, with fixed defaults (intl-host.ts).
    vm.registerHostCallback('__cc_intl', (...args) =>
      give(vm.newString(answerIntl(str(args[0]), str(args[1]), str(args[2]), str(args[3])))),
    );
    vm.registerHostCallback('__cc_intl_call', (...args) =>
      give(vm.newString(callIntl(num(args[0]), str(args[1]), str(args[2])))),
    );
    vm.registerHostCallback('__cc_intl_compare', (...args) =>
      give(vm.newNumber(compareIntl(num(args[0]), str(args[1]), str(args[2])))),
    );
    // Pure: UTF-8 and base64 natively (bytes-host.ts); null sends the guest down its own codec's path.
    vm.registerHostCallback('__cc_bytes', (...args) => {
      const input = args[1];
      if (input === undefined) return vm.null;
      let answer: string | Uint8Array | null = null;
      try {
        if (vm.typeof(input) === 'string') answer = answerBytes(num(args[0]), { text: input.toString() });
        else if (input.isArrayBuffer)
          answer = answerBytes(num(args[0]), { bytes: new Uint8Array(input.toArrayBuffer()) });
        if (answer === null) return vm.null;
        return give(typeof answer === 'string' ? vm.newString(answer) : vm.newUint8Array(answer));
      } catch {
        // Out of memory in the VM, say: the guest's own codec meets the limit as any guest code does.
        return vm.null;
      }
    });
    vm.registerHostCallback('__cc_done', (...args) => {
      const ok = args[0] !== undefined && vm.typeof(args[0]) === 'boolean' && args[0].toBoolean();
      this.hooks?.onDone(ok, str(args[1]));
      return vm.undefined;
    });
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
