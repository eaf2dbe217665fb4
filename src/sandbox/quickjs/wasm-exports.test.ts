import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { keepQuickJsExport, stripWasmExports } from './wasm-exports.ts';

interface WasmApi {
  Module: { new (bytes: Uint8Array): object; exports(m: object): { name: string; kind: string }[] };
}
const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;
const bytes = readFileSync(createRequire(import.meta.url).resolve('quickjs-wasi/quickjs.wasm'));

describe('stripWasmExports', () => {
  it('keeps exactly the exports quickjs-wasi needs and a module that still compiles', () => {
    const before = wasm.Module.exports(new wasm.Module(bytes)).map((e) => e.name);
    const stripped = stripWasmExports(bytes, keepQuickJsExport);
    const after = wasm.Module.exports(new wasm.Module(stripped)).map((e) => e.name);
    expect(after).toEqual(before.filter(keepQuickJsExport));
    expect(after).toContain('memory');
    expect(after).toContain('qjs_eval');
    expect(after.length).toBeLessThan(before.length / 2);
  });

  it('changes nothing when every export is kept', () => {
    expect(Buffer.from(stripWasmExports(bytes, () => true)).equals(bytes)).toBe(true);
  });

  it('refuses a truncated binary', () => {
    expect(() => stripWasmExports(bytes.subarray(0, 1000), () => true)).toThrow(/past the end|truncated/);
  });
});
