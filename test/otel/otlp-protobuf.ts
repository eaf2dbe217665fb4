// ExportTraceServiceRequest in the protobuf encoding (http/protobuf, the OTLP default), decoded into the shape of
// the JSON encoding (hex ids, string nanoseconds, AnyValue objects) so the test receiver reads both alike. Only
// the fields the tests look at; unknown fields are skipped by their wire type, as protobuf requires.

type Fields = Map<number, (Uint8Array | bigint)[]>;

/** Reads one message's fields: varints and fixed64 as bigint, length-delimited as bytes (fixed32 skipped). */
function fieldsOf(buf: Uint8Array): Fields {
  const fields: Fields = new Map();
  let pos = 0;
  const varint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (pos >= buf.length) throw new Error('protobuf: truncated varint');
      const b = buf[pos++] ?? 0;
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result;
      shift += 7n;
      if (shift > 63n) throw new Error('protobuf: varint too long');
    }
  };
  const put = (field: number, v: Uint8Array | bigint) => fields.set(field, [...(fields.get(field) ?? []), v]);
  while (pos < buf.length) {
    const tag = Number(varint());
    const field = tag >>> 3;
    switch (tag & 7) {
      case 0:
        put(field, varint());
        break;
      case 1:
        put(field, new DataView(buf.buffer, buf.byteOffset + pos, 8).getBigUint64(0, true));
        pos += 8;
        break;
      case 2: {
        const len = Number(varint());
        if (pos + len > buf.length) throw new Error('protobuf: truncated field');
        put(field, buf.subarray(pos, pos + len));
        pos += len;
        break;
      }
      case 5:
        pos += 4;
        break;
      default:
        throw new Error(`protobuf: wire type ${tag & 7}`);
    }
  }
  return fields;
}

const bytes = (f: Fields, n: number): Uint8Array[] => (f.get(n) ?? []).filter((v) => v instanceof Uint8Array);
const one = (f: Fields, n: number): Uint8Array | undefined => bytes(f, n)[0];
const num = (f: Fields, n: number): bigint | undefined => (f.get(n) ?? []).find((v) => typeof v === 'bigint');
const text = (b: Uint8Array | undefined): string => (b ? Buffer.from(b).toString('utf8') : '');
const hex = (b: Uint8Array | undefined): string => (b ? Buffer.from(b).toString('hex') : '');

function anyValue(b: Uint8Array): Record<string, unknown> {
  const f = fieldsOf(b);
  if (f.has(1)) return { stringValue: text(one(f, 1)) };
  if (f.has(2)) return { boolValue: num(f, 2) === 1n };
  if (f.has(3)) return { intValue: BigInt.asIntN(64, num(f, 3) ?? 0n).toString() };
  if (f.has(4)) {
    const view = new DataView(new ArrayBuffer(8));
    view.setBigUint64(0, num(f, 4) ?? 0n, true);
    return { doubleValue: view.getFloat64(0, true) };
  }
  if (f.has(5))
    return { arrayValue: { values: bytes(fieldsOf(one(f, 5) ?? new Uint8Array()), 1).map(anyValue) } };
  return {};
}

function attributes(f: Fields, n: number) {
  return bytes(f, n).map((kv) => {
    const k = fieldsOf(kv);
    return { key: text(one(k, 1)), value: anyValue(one(k, 2) ?? new Uint8Array()) };
  });
}

function span(b: Uint8Array): Record<string, unknown> {
  const f = fieldsOf(b);
  const status = fieldsOf(one(f, 15) ?? new Uint8Array());
  return {
    traceId: hex(one(f, 1)),
    spanId: hex(one(f, 2)),
    parentSpanId: hex(one(f, 4)),
    name: text(one(f, 5)),
    kind: Number(num(f, 6) ?? 0n),
    startTimeUnixNano: String(num(f, 7) ?? 0n),
    endTimeUnixNano: String(num(f, 8) ?? 0n),
    attributes: attributes(f, 9),
    events: bytes(f, 11).map((e) => {
      const ef = fieldsOf(e);
      return { name: text(one(ef, 2)), attributes: attributes(ef, 3) };
    }),
    links: bytes(f, 13).map((l) => {
      const lf = fieldsOf(l);
      return { traceId: hex(one(lf, 1)), spanId: hex(one(lf, 2)) };
    }),
    status: { code: Number(num(status, 3) ?? 0n) },
  };
}

/** The request as the JSON encoding would carry it (`resourceSpans[].scopeSpans[].spans[]`). */
export function decodeTraceRequest(body: Uint8Array): {
  resourceSpans: {
    resource: { attributes: ReturnType<typeof attributes> };
    scopeSpans: { spans: unknown[] }[];
  }[];
} {
  return {
    resourceSpans: bytes(fieldsOf(body), 1).map((rs) => {
      const r = fieldsOf(rs);
      return {
        resource: { attributes: attributes(fieldsOf(one(r, 1) ?? new Uint8Array()), 1) },
        scopeSpans: bytes(r, 2).map((ss) => ({ spans: bytes(fieldsOf(ss), 2).map(span) })),
      };
    }),
  };
}
