import { QuickJS } from 'quickjs-wasi';
import type { QuickJSOptions, Snapshot } from 'quickjs-wasi';

/**
 * Restoring a snapshot copies the whole linear memory (1.6 MB, ~1 MB of it an all-zero stack) into a fresh
 * instance, and the page faults of that copy cost as much as the instantiation. A fresh instance's memory is
 * known in advance, so we copy only the pages where the snapshot differs from it. This reaches into
 * quickjs-wasi's internals (the version is pinned); when they are missing we fall back to `QuickJS.restore`.
 */
interface QuickJsInternals {
  new (module: unknown): QuickJS;
  normalizeOptions(options: QuickJSOptions): QuickJSOptions & { wasi?: unknown };
  instantiate(module: unknown, vm: QuickJS, wasi: unknown): Promise<{ instance: unknown }>;
  applyLimits(vm: QuickJS, options: QuickJSOptions): void;
}

interface VmExports {
  memory: { buffer: ArrayBuffer; grow(pages: number): number };
  __stack_pointer: { value: number };
  qjs_set_runtime_and_context(runtimePtr: number, contextPtr: number): void;
}

const PAGE = 4096;
const WASM_PAGE = 65536;

/** The pages of a snapshot that differ from a freshly instantiated module's memory. */
export interface MemoryDelta {
  readonly byteLength: number;
  readonly chunks: readonly { readonly offset: number; readonly bytes: Uint8Array }[];
}

function internals(): QuickJsInternals | null {
  const q = QuickJS as unknown as Partial<QuickJsInternals> & { prototype: { setInstance?: unknown } };
  return typeof q.normalizeOptions === 'function' &&
    typeof q.instantiate === 'function' &&
    typeof q.applyLimits === 'function' &&
    typeof q.prototype.setInstance === 'function'
    ? (QuickJS as unknown as QuickJsInternals)
    : null;
}

async function instantiateBare(
  module: unknown,
  options: QuickJSOptions,
): Promise<{ vm: QuickJS; exports: VmExports }> {
  const Q = internals();
  if (!Q) throw new Error('quickjs-wasi internals are not available');
  const opts = Q.normalizeOptions(options);
  const vm = new Q(module);
  const { instance } = await Q.instantiate(module, vm, opts.wasi);
  (vm as unknown as { setInstance(i: unknown): void }).setInstance(instance);
  return { vm, exports: (vm as unknown as { exports: VmExports }).exports };
}

function growTo(exports: VmExports, byteLength: number): void {
  const have = exports.memory.buffer.byteLength / WASM_PAGE;
  const need = Math.ceil(byteLength / WASM_PAGE);
  if (need > have) exports.memory.grow(need - have);
}

/** Computes the delta once per template; null when the internals are unavailable. */
export async function computeDelta(module: unknown, snapshot: Snapshot): Promise<MemoryDelta | null> {
  if (!internals()) return null;
  const { vm, exports } = await instantiateBare(module, { wasm: module as never });
  try {
    growTo(exports, snapshot.memory.byteLength);
    const fresh = new Uint8Array(exports.memory.buffer);
    const snap = snapshot.memory;
    const chunks: { offset: number; bytes: Uint8Array }[] = [];
    let start = -1;
    for (let offset = 0; offset < snap.byteLength; offset += PAGE) {
      const end = Math.min(offset + PAGE, snap.byteLength);
      let differs = false;
      for (let i = offset; i < end; i++) {
        if (snap[i] !== fresh[i]) {
          differs = true;
          break;
        }
      }
      if (differs && start < 0) start = offset;
      if (!differs && start >= 0) {
        chunks.push({ offset: start, bytes: snap.slice(start, offset) });
        start = -1;
      }
    }
    if (start >= 0) chunks.push({ offset: start, bytes: snap.slice(start) });
    return { byteLength: snap.byteLength, chunks };
  } finally {
    try {
      vm.dispose();
    } catch {
      // A bare instance has no runtime to free.
    }
  }
}

/** A Wasm instance with nothing restored into it yet (`fillSpare`); null when the internals are unavailable. */
export async function instantiateSpare(
  options: QuickJSOptions,
): Promise<{ vm: QuickJS; exports: VmExports } | null> {
  return internals() ? instantiateBare(options.wasm, options) : null;
}

/**
 * Restores a whole snapshot into a spare instance (instantiating is most of what a restore costs, so a worker
 * keeps one ready): its memory copied over, the runtime's pointers set, the limits applied.
 */
export function fillSpare(
  spare: { vm: QuickJS; exports: VmExports },
  snapshot: Snapshot,
  options: QuickJSOptions,
): QuickJS {
  const Q = internals();
  if (!Q) throw new Error('quickjs-wasi internals are not available');
  const { vm, exports } = spare;
  growTo(exports, snapshot.memory.byteLength);
  new Uint8Array(exports.memory.buffer).set(snapshot.memory);
  exports.qjs_set_runtime_and_context(snapshot.runtimePtr, snapshot.contextPtr);
  exports.__stack_pointer.value = snapshot.stackPointer;
  Q.applyLimits(vm, options);
  return vm;
}

/** `QuickJS.restore`, copying only the pages in `delta`. */
export async function restoreWithDelta(
  snapshot: Snapshot,
  delta: MemoryDelta | null,
  options: QuickJSOptions,
): Promise<QuickJS> {
  const Q = internals();
  if (!delta || !Q) return QuickJS.restore(snapshot, options);
  const { vm, exports } = await instantiateBare(options.wasm, options);
  growTo(exports, delta.byteLength);
  const dst = new Uint8Array(exports.memory.buffer);
  for (const chunk of delta.chunks) dst.set(chunk.bytes, chunk.offset);
  exports.qjs_set_runtime_and_context(snapshot.runtimePtr, snapshot.contextPtr);
  exports.__stack_pointer.value = snapshot.stackPointer;
  Q.applyLimits(vm, options);
  return vm;
}
