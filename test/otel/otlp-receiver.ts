import { startTelemetry } from '../../src/service/telemetry-provider.ts';
import type { Telemetry } from '../../src/service/telemetry-provider.ts';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeTraceRequest } from './otlp-protobuf.ts';

/** A span as the OTLP/HTTP JSON payload carries it, flattened for assertions. */
export interface ReceivedSpan {
  readonly name: string;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string;
  readonly start: bigint;
  readonly end: bigint;
  readonly attributes: Readonly<Record<string, unknown>>;
  readonly events: readonly { readonly name: string; readonly attributes: Record<string, unknown> }[];
  readonly links: readonly { readonly traceId: string; readonly spanId: string }[];
  /** 2: error. */
  readonly status: number;
  readonly service: unknown;
}

interface OtlpValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: number | string;
  doubleValue?: number;
  arrayValue?: { values?: OtlpValue[] };
}
interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}

function valueOf(v: OtlpValue): unknown {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.arrayValue !== undefined) return (v.arrayValue.values ?? []).map(valueOf);
  return undefined;
}

function attributesOf(list: OtlpAttribute[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((a) => [a.key, valueOf(a.value)]));
}

/**
 * An OTLP/HTTP receiver on loopback, as a collector or Jaeger would be: it takes `POST /v1/traces` in either
 * encoding (protobuf, the default, or JSON: by the content type) and keeps every span. `waitFor` polls until a condition over the spans holds.
 */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  requests = 0;
  readonly headers: Record<string, string | string[] | undefined>[] = [];
  private constructor(private readonly server: Server) {}

  static async start(): Promise<OtlpReceiver> {
    const box: { receiver?: OtlpReceiver } = {};
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        box.receiver?.take(req.url ?? '', req.headers, Buffer.concat(chunks));
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    box.receiver = new OtlpReceiver(server);
    return box.receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1/traces`;
  }

  private take(url: string, headers: Record<string, string | string[] | undefined>, body: Buffer): void {
    if (!url.startsWith('/v1/traces')) return;
    this.requests++;
    this.headers.push(headers);
    const protobuf = headers['content-type'] === 'application/x-protobuf';
    const payload = (protobuf ? decodeTraceRequest(body) : JSON.parse(body.toString('utf8'))) as {
      resourceSpans?: {
        resource?: { attributes?: OtlpAttribute[] };
        scopeSpans?: { spans?: Record<string, unknown>[] }[];
      }[];
    };
    for (const rs of payload.resourceSpans ?? []) {
      const service = attributesOf(rs.resource?.attributes)['service.name'];
      for (const ss of rs.scopeSpans ?? []) {
        for (const s of ss.spans ?? []) {
          this.spans.push({
            name: String(s.name),
            traceId: String(s.traceId),
            spanId: String(s.spanId),
            parentSpanId: typeof s.parentSpanId === 'string' ? s.parentSpanId : '',
            start: BigInt(String(s.startTimeUnixNano)),
            end: BigInt(String(s.endTimeUnixNano)),
            attributes: attributesOf(s.attributes as OtlpAttribute[] | undefined),
            events: ((s.events as { name: string; attributes?: OtlpAttribute[] }[] | undefined) ?? []).map(
              (e) => ({ name: e.name, attributes: attributesOf(e.attributes) }),
            ),
            links: ((s.links as { traceId: string; spanId: string }[] | undefined) ?? []).map((l) => ({
              traceId: l.traceId,
              spanId: l.spanId,
            })),
            status: Number((s.status as { code?: number } | undefined)?.code ?? 0),
            service,
          });
        }
      }
    }
  }

  /** Waits (polling, generous ceiling) until `test` holds over the spans received so far. */
  async waitFor(
    test: (spans: readonly ReceivedSpan[]) => boolean,
    ceilingMs = 60_000,
  ): Promise<ReceivedSpan[]> {
    const until = Date.now() + ceilingMs;
    while (!test(this.spans)) {
      if (Date.now() > until) {
        throw new Error(`spans never matched; got ${this.spans.map((s) => s.name).join(', ')}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    return this.spans;
  }

  /** The spans of one task's runs, by its id attribute. */
  runsOf(taskId: string): ReceivedSpan[] {
    return this.spans.filter(
      (s) => s.name === 'codecall.task.run' && s.attributes['codecall.task.id'] === taskId,
    );
  }

  /** The spans below `root` (its descendants in the same trace). */
  below(root: ReceivedSpan): ReceivedSpan[] {
    const ids = new Set([root.spanId]);
    const out: ReceivedSpan[] = [];
    let grew = true;
    while (grew) {
      grew = false;
      for (const s of this.spans) {
        if (s.traceId === root.traceId && ids.has(s.parentSpanId) && !ids.has(s.spanId)) {
          ids.add(s.spanId);
          out.push(s);
          grew = true;
        }
      }
    }
    return out;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** The service's SDK set-up exporting to `receiver` quickly (every 50 ms), nothing of content. */
export function startTestTelemetry(
  receiver: OtlpReceiver,
  serviceName: string,
  sampler: 'always_on' | 'parentbased_always_on' = 'always_on',
  protocol: 'http/protobuf' | 'http/json' = 'http/protobuf',
): Telemetry | null {
  return startTelemetry(
    {
      url: receiver.url,
      protocol,
      serviceName,
      sampler,
      ratio: 1,
      includeContent: false,
      contentMaxBytes: 1024,
      headers: {},
    },
    { scheduledDelayMs: 50 },
  );
}
