// Real HTTP servers on loopback for the egress tests, with what each request carried.
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';
import { createEgress } from '../../src/egress/index.ts';
import type { EgressOptions } from '../../src/egress/index.ts';
import type { Egress, EgressRequest, NetworkAccess } from '../../src/spec/index.ts';

export interface Seen {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage['headers'];
  readonly rawHeaders: readonly string[];
  readonly body: string;
}

export interface TestServer {
  readonly port: number;
  readonly seen: Seen[];
  readonly url: (path?: string) => string;
}

const open: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((close) => close()));
});

/** A server on 127.0.0.1 (closed after each test) answering with `handle` once it has read the request body. */
export async function startServer(
  handle: (req: IncomingMessage, res: ServerResponse, seen: Seen) => void,
): Promise<TestServer> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const one: Seen = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        rawHeaders: req.rawHeaders,
        body: Buffer.concat(chunks).toString(),
      };
      seen.push(one);
      handle(req, res, one);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  open.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { port, seen, url: (path = '/') => `http://127.0.0.1:${port}${path}` };
}

/** A port nothing listens on (bound, then closed). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Test names resolved to loopback by the egress's own lookup (nothing asks real DNS). */
export function lookupOf(
  table: Readonly<Record<string, string>>,
  calls: string[] = [],
): NonNullable<EgressOptions['lookup']> {
  return (host) => {
    calls.push(host);
    const address = table[host];
    if (address === undefined)
      return Promise.reject(Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' }));
    return Promise.resolve([{ address, family: address.includes(':') ? 6 : 4 }]);
  };
}

/** An egress that may reach loopback (the operator's allowPrivate), as the tests' servers live there. */
export function localEgress(options: EgressOptions = {}): Egress {
  return createEgress({ allowPrivate: true, ...options });
}

export function get(url: string, more: Partial<EgressRequest> = {}): EgressRequest {
  return { url, method: 'GET', headers: [], body: null, ...more };
}

export function access(allow: string[], more: Partial<NetworkAccess> = {}): NetworkAccess {
  return { allow, allowHttp: true, ...more };
}

export const never = (): AbortSignal => new AbortController().signal;

/** What a failed fetch rejected with, as a plain object (code, details, message). */
export async function rejection(
  promise: Promise<unknown>,
): Promise<{ code: string; details: Record<string, unknown>; message: string; error: unknown }> {
  try {
    await promise;
  } catch (error) {
    const e = error as { code?: unknown; details?: unknown; message?: unknown };
    return {
      code: String(e.code),
      details: (e.details ?? {}) as Record<string, unknown>,
      message: String(e.message),
      error,
    };
  }
  throw new Error('expected the fetch to fail');
}

export const text = (base64: string): string => Buffer.from(base64, 'base64').toString();
