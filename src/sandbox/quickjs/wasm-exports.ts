/**
 * quickjs.wasm exports ~450 functions (the whole QuickJS C API, for native extensions); instantiating it builds a
 * JS wrapper for each, which was half of the instantiation time and much of the garbage per VM. We keep only what
 * quickjs-wasi itself calls (measured: instantiation 0.7-0.9 ms -> 0.34 ms). Extensions are not used.
 */
const EXPORT_SECTION = 7;
const KEEP_EXACT = new Set([
  'memory',
  '__stack_pointer',
  '_initialize',
  '__indirect_function_table',
  'wasm_malloc',
  'wasm_free',
]);

export function keepQuickJsExport(name: string): boolean {
  return name.startsWith('qjs_') || KEEP_EXACT.has(name);
}

function readLeb(buf: Uint8Array, pos: number): [value: number, next: number] {
  let result = 0;
  let shift = 0;
  for (;;) {
    const byte = buf[pos++];
    if (byte === undefined) throw new Error('truncated LEB128 in wasm binary');
    result += (byte & 0x7f) * 2 ** shift;
    shift += 7;
    if ((byte & 0x80) === 0) return [result, pos];
  }
}

function writeLeb(n: number): number[] {
  const out: number[] = [];
  do {
    let byte = n & 0x7f;
    n = Math.floor(n / 128);
    if (n > 0) byte |= 0x80;
    out.push(byte);
  } while (n > 0);
  return out;
}

/** Returns the module bytes with only the exports `keep` accepts; every other section is copied unchanged. */
export function stripWasmExports(bytes: Uint8Array, keep: (name: string) => boolean): Uint8Array {
  const decoder = new TextDecoder();
  const parts: Uint8Array[] = [bytes.subarray(0, 8)];
  let pos = 8;
  while (pos < bytes.length) {
    const id = bytes[pos];
    const [size, bodyStart] = readLeb(bytes, pos + 1);
    const end = bodyStart + size;
    if (end > bytes.length) throw new Error('wasm section runs past the end of the binary');
    if (id !== EXPORT_SECTION) {
      parts.push(bytes.subarray(pos, end));
      pos = end;
      continue;
    }
    let [count, p] = readLeb(bytes, bodyStart);
    const kept: Uint8Array[] = [];
    let keptCount = 0;
    for (; count > 0; count--) {
      const entryStart = p;
      const [nameLength, nameStart] = readLeb(bytes, p);
      const name = decoder.decode(bytes.subarray(nameStart, nameStart + nameLength));
      [, p] = readLeb(bytes, nameStart + nameLength + 1); // kind byte, then the index
      if (keep(name)) {
        kept.push(bytes.subarray(entryStart, p));
        keptCount++;
      }
    }
    const body = concat([Uint8Array.from(writeLeb(keptCount)), ...kept]);
    parts.push(Uint8Array.from([EXPORT_SECTION, ...writeLeb(body.length)]), body);
    pos = end;
  }
  return concat(parts);
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const p of parts) {
    out.set(p, offset);
    offset += p.length;
  }
  return out;
}
