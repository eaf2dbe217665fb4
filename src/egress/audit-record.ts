import { CodecallError } from '../errors/index.ts';
import type { EgressAuditContext, EgressAuditRecord } from '../spec/index.ts';

/** Where the egress's audit records go (EgressOptions.audit): called once per hop, never throws into a request. */
export type EgressAuditSink = (record: EgressAuditRecord) => void;

const OUTCOMES: Readonly<Record<string, EgressAuditRecord['outcome']>> = {
  EGRESS_REFUSED: 'refused',
  EGRESS_LIMIT: 'limit',
  EGRESS_TIMEOUT: 'timeout',
  EGRESS_FAILED: 'failed',
  ABORTED: 'aborted',
};

/** One hop as it goes: what is known of it is filled in as it is learned, and `end` records it once. */
export class HopAudit {
  readonly #started = performance.now();
  readonly #at = new Date().toISOString();
  address: string | null = null;
  allowedBy: string | null = null;
  status: number | null = null;
  responseBytes = 0;
  stored = false;

  constructor(
    private readonly sink: EgressAuditSink,
    private readonly context: EgressAuditContext | undefined,
    private readonly url: URL,
    private readonly method: string,
    private readonly requestBytes: number,
    private readonly hop: number,
  ) {}

  /** Records the hop: `error` null for an answer. */
  end(error: unknown): void {
    let code: string | null = null;
    let reason: string | null = null;
    let outcome: EgressAuditRecord['outcome'] = 'ok';
    if (error !== null) {
      code = error instanceof CodecallError ? error.code : 'INTERNAL';
      outcome = OUTCOMES[code] ?? 'failed';
      const details = error instanceof CodecallError ? error.details : undefined;
      const why = details?.reason ?? details?.cause ?? details?.limit;
      reason = typeof why === 'string' ? why : null;
    }
    const { url } = this;
    const record: EgressAuditRecord = {
      ...this.context,
      at: this.#at,
      method: this.method,
      scheme: url.protocol.slice(0, -1),
      host: url.hostname.replace(/\.$/, ''),
      port: url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port),
      path: url.pathname,
      address: this.address,
      allowedBy: this.allowedBy,
      outcome,
      status: this.status,
      code,
      reason,
      requestBytes: this.requestBytes,
      responseBytes: this.responseBytes,
      stored: this.stored,
      hop: this.hop,
      durationMs: Math.round((performance.now() - this.#started) * 1000) / 1000,
    };
    try {
      this.sink(record);
    } catch {
      // An audit sink's failure is the operator's to see in its own logs; the request's outcome stands.
    }
  }
}
