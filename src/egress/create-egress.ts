import { CodecallError } from '../errors/index.ts';
import type {
  Egress,
  EgressAuditContext,
  EgressRequest,
  EgressResponse,
  NetworkAccess,
} from '../spec/index.ts';
import { HopAudit } from './audit-record.ts';
import type { EgressAuditSink } from './audit-record.ts';
import { parseAllowEntry } from '../spec/index.ts';
import type { AllowEntry } from '../spec/index.ts';
import { abortReason, failed, refused, timedOut } from './egress-errors.ts';
import { egressSettings } from './egress-settings.ts';
import type { EgressOptions, EgressSettings } from './egress-settings.ts';
import { becomesGet, isRedirect } from './redirects.ts';
import { crossOriginHeaders, outgoingHeaders, withoutBodyHeaders } from './request-headers.ts';
import { requestParts } from './request-parts.ts';
import type { RequestParts } from './request-parts.ts';
import { redactSecrets } from './secrets.ts';
import { readBody, sendHop } from './send-hop.ts';
import { ConnectionPool } from './connection-pool.ts';
import { readOrSpill } from './spill-body.ts';
import type { BodySpill } from './spill-body.ts';
import { resolveDestination, vetDestination } from './vet-destination.ts';

/**
 * The host side of a task's network access: each request made under the task's `network_access` and the
 * operator's ceilings, every hop vetted (allow list, public addresses, pinned) before it is sent.
 */
export function createEgress(options: EgressOptions = {}): Egress {
  return egressFromSettings(egressSettings(options));
}

/** The egress over settings already checked (tests give one an address policy of their own). */
export function egressFromSettings(settings: EgressSettings): Egress {
  const compiled = new WeakMap<readonly string[], readonly AllowEntry[]>();
  const entriesOf = (allow: readonly string[]): readonly AllowEntry[] => {
    let entries = compiled.get(allow);
    if (entries === undefined) {
      entries = allow.map((raw) => {
        const entry = parseAllowEntry(raw);
        if (typeof entry === 'string')
          throw new CodecallError('INVALID_ARGUMENT', `network_access.allow: ${entry}`, {
            details: { field: 'network_access.allow', entry: raw },
          });
        return entry;
      });
      compiled.set(allow, entries);
    }
    return entries;
  };
  const pool = new ConnectionPool();
  return {
    fetch: (request, access, { signal, spill, audit, cancelled }) =>
      fetchUnder({ settings, pool, audit }, entriesOf, request, access, signal, spill, cancelled),
  };
}

interface EgressParts {
  readonly settings: EgressSettings;
  readonly pool: ConnectionPool;
  /** Who the request is for, in its audit records. */
  readonly audit: EgressAuditContext | undefined;
}

async function fetchUnder(
  egress: EgressParts,
  entriesOf: (allow: readonly string[]) => readonly AllowEntry[],
  request: EgressRequest,
  access: NetworkAccess,
  outer: AbortSignal,
  spill: BodySpill | undefined,
  cancelled: AbortSignal | undefined,
): Promise<EgressResponse> {
  if (outer.aborted) throw abortReason(outer);
  if (cancelled?.aborted) throw abortReason(cancelled);
  const { settings } = egress;
  const parts = requestParts(request, settings.maxRequestBytes);
  const entries = entriesOf(access.allow);
  // The program's own timeout (when it gives one) only shortens the task's and the operator's.
  const timeoutSeconds = Math.min(
    access.timeoutSeconds ?? settings.timeoutSeconds,
    settings.timeoutSeconds,
    parts.timeoutSeconds ?? Number.POSITIVE_INFINITY,
  );
  // One deadline over every hop, and the caller's abort: both end whatever is under way at once.
  const controller = new AbortController();
  const onAbort = (): void => controller.abort(abortReason(outer));
  outer.addEventListener('abort', onAbort, { once: true });
  // Not AbortSignal.any: a listener is cheaper per request, and removed with it.
  const onCancel = (): void => {
    if (cancelled) controller.abort(abortReason(cancelled));
  };
  cancelled?.addEventListener('abort', onCancel, { once: true });
  const timer = setTimeout(() => controller.abort(timedOut(timeoutSeconds)), timeoutSeconds * 1000);
  try {
    return await follow(parts, egress, access, entries, controller.signal, spill);
  } catch (error) {
    // Whatever a hop threw as the signal fired (a destroyed socket's error), the signal's reason is the answer.
    throw controller.signal.aborted ? (controller.signal.reason as Error) : error;
  } finally {
    clearTimeout(timer);
    outer.removeEventListener('abort', onAbort);
    cancelled?.removeEventListener('abort', onCancel);
  }
}

async function follow(
  parts: RequestParts,
  egress: EgressParts,
  access: NetworkAccess,
  entries: readonly AllowEntry[],
  signal: AbortSignal,
  spill: BodySpill | undefined,
): Promise<EgressResponse> {
  const sink = egress.settings.audit;
  if (sink === undefined) return followHops(egress, parts, access, entries, signal, spill, null);
  const hops = { sink, context: egress.audit, current: null as HopAudit | null };
  try {
    return await followHops(egress, parts, access, entries, signal, spill, hops);
  } catch (error) {
    // Whatever a hop threw as the signal fired, the signal's reason is the outcome (as fetchUnder answers).
    hops.current?.end(signal.aborted ? signal.reason : error);
    throw error;
  }
}

interface Hops {
  readonly sink: EgressAuditSink;
  readonly context: EgressAuditContext | undefined;
  /** The hop under way: recorded when it ends (an answer, a redirect, or a throw). */
  current: HopAudit | null;
}

async function followHops(
  { settings, pool }: EgressParts,
  parts: RequestParts,
  access: NetworkAccess,
  entries: readonly AllowEntry[],
  signal: AbortSignal,
  spill: BodySpill | undefined,
  hops: Hops | null,
): Promise<EgressResponse> {
  const maxBytes = Math.min(access.maxBytes ?? settings.maxBytes, settings.maxBytes);
  let { url, method, headers, body } = parts;
  let redirects = 0;
  /** Secret values that went out, by name: redacted from what comes back. */
  const sent = new Map<string, string>();
  for (;;) {
    const audit = hops && new HopAudit(hops.sink, hops.context, url, method, body?.length ?? 0, redirects);
    if (hops) hops.current = audit;
    const to = vetDestination(url, method, access, entries, settings);
    if (audit) audit.allowedBy = to.allowedBy;
    // Secrets are checked and injected before anything is resolved: a refused one costs no DNS query.
    const outgoing = outgoingHeaders({
      hostHeader: url.host,
      headers,
      bodyLength: body === null ? null : body.length,
      method,
      secrets: settings.secrets,
      to,
      sent,
      maxBytes: settings.maxHeaderBytes,
    });
    const addresses = await resolveDestination(to, settings.lookup, settings, signal);
    if (audit) audit.address = addresses[0]?.address ?? null;
    const hop = await sendHop({
      to,
      addresses,
      method,
      headers: outgoing,
      body,
      maxHeaderBytes: settings.maxHeaderBytes,
      signal,
      agent: pool.agentFor(to, addresses),
    });
    const status = hop.response.statusCode ?? 0;
    if (audit) {
      audit.status = status;
      audit.address = hop.request.socket?.remoteAddress ?? audit.address;
    }
    const location = hop.response.headers.location;
    if (isRedirect(status) && location !== undefined && parts.redirect !== 'manual') {
      // The redirect's body is dropped unread, and its connection with it.
      hop.response.destroy();
      hop.request.destroy();
      if (parts.redirect === 'error')
        throw refused('redirect', `${to.host} answered ${status} (a redirect) and redirect is 'error'`, {
          status,
        });
      if (redirects >= settings.maxRedirects)
        throw refused('redirect', `more than ${settings.maxRedirects} redirects`, {
          max_redirects: settings.maxRedirects,
        });
      let next: URL;
      try {
        next = new URL(location, url);
      } catch (error) {
        throw failed(
          to.host,
          Object.assign(new Error(`redirect to an invalid URL`), {
            code: 'HPE_INVALID_LOCATION',
            cause: error,
          }),
        );
      }
      next.hash = '';
      // Answered (a redirect followed): a refusal of where it leads is the next hop's record.
      audit?.end(null);
      if (hops) hops.current = null;
      redirects += 1;
      if (becomesGet(status, method)) {
        method = 'GET';
        body = null;
        headers = withoutBodyHeaders(headers);
      }
      // Credentials and injected secrets were meant for the first origin only.
      if (next.origin !== url.origin) headers = crossOriginHeaders(headers);
      url = next;
      continue;
    }
    const reading = { host: to.host, maxBytes, signal, head: method === 'HEAD' };
    const read = spill
      ? await readOrSpill(hop, { ...reading, spill })
      : { bytes: await readBody(hop, reading) };
    if (audit) {
      audit.responseBytes = 'stored' in read ? read.stored.size : read.bytes.length;
      audit.stored = 'stored' in read;
      audit.end(null);
      hops.current = null;
    }
    const raw = hop.response.rawHeaders;
    const responseHeaders: (readonly [string, string])[] = [];
    for (let i = 0; i + 1 < raw.length; i += 2)
      responseHeaders.push([(raw[i] ?? '').toLowerCase(), redactSecrets(raw[i + 1] ?? '', sent)]);
    return {
      status,
      statusText: hop.response.statusMessage ?? '',
      headers: responseHeaders,
      url: redactSecrets(url.href, sent),
      redirected: redirects > 0,
      ...('stored' in read ? { body: '', storedBody: read.stored } : { body: read.bytes.toString('base64') }),
      allowedBy: to.allowedBy,
    };
  }
}
