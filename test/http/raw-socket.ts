// Raw node:net clients for the connection tests: what a slow or hostile client sends, byte by byte.
import { connect } from 'node:net';
import type { Socket } from 'node:net';

export interface RawClient {
  readonly socket: Socket;
  /** Everything received so far. */
  text(): string;
  /** Settles once the server closed (or reset) the connection, with what it sent. */
  readonly closed: Promise<string>;
  /** Settles once the received text contains `marker`. */
  until(marker: string): Promise<string>;
}

export async function rawClient(address: string): Promise<RawClient> {
  const url = new URL(address);
  const socket = connect({ host: url.hostname, port: Number(url.port) });
  socket.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  let received = '';
  const waiters: (() => void)[] = [];
  socket.on('data', (chunk: Buffer) => {
    received += chunk.toString('latin1');
    waiters.forEach((w) => w());
  });
  const closed = new Promise<string>((resolve) => socket.once('close', () => resolve(received)));
  return {
    socket,
    text: () => received,
    closed,
    until: (marker) =>
      new Promise<string>((resolve, reject) => {
        const check = (): void => {
          if (received.includes(marker)) resolve(received);
        };
        waiters.push(check);
        void closed.then(() =>
          received.includes(marker)
            ? resolve(received)
            : reject(new Error(`closed before "${marker}": ${received}`)),
        );
        check();
      }),
  };
}

/** Resolves `value` after `ms`, for racing against a close that must (not) come. */
export function after<T>(ms: number, value: T): Promise<T> {
  return new Promise((resolve) => setTimeout(() => resolve(value), ms));
}

/** The JSON body of the last response in `text`. */
export function lastBody(text: string): unknown {
  const at = text.lastIndexOf('\r\n\r\n');
  return JSON.parse(text.slice(at + 4));
}
