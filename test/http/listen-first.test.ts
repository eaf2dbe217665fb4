import { describe, expect, it } from 'vitest';
import { CodecallError } from '../../src/errors/index.ts';
import { listenFirst } from '../../src/http/listen-first.ts';

// The port `codecall serve` binds before anything else: alive but not ready until the API takes over, and a taken
// port is one stable error, not a stack trace.

describe('listenFirst', () => {
  it('answers healthz 200 "starting" and everything else 503 STARTING until it is handed the API', async () => {
    const listener = await listenFirst({ port: 0, host: '127.0.0.1' });
    try {
      const health = await fetch(`${listener.address}/healthz`);
      expect(health.status).toBe(200);
      expect(await health.json()).toEqual({ status: 'starting' });
      for (const [method, path] of [
        ['GET', '/readyz'],
        ['GET', '/api/v1/tasks'],
        ['POST', '/api/v1/tasks'],
      ] as const) {
        const res = await fetch(`${listener.address}${path}`, {
          method,
          ...(method === 'POST'
            ? { body: '{"code":"return 1"}', headers: { 'content-type': 'application/json' } }
            : {}),
        });
        expect(res.status, path).toBe(503);
        expect(res.headers.get('retry-after')).toBe('1');
        expect(await res.json()).toMatchObject({ error: { code: 'STARTING' } });
      }
      listener.serve((_req, res) => res.writeHead(204).end());
      expect((await fetch(`${listener.address}/readyz`)).status).toBe(204);
    } finally {
      await listener.close();
    }
  });

  it('refuses a taken port with PORT_IN_USE naming it, and leaves the holder serving', async () => {
    const holder = await listenFirst({ port: 0, host: '127.0.0.1' });
    const port = Number(new URL(holder.address).port);
    try {
      const error = await listenFirst({ port, host: '127.0.0.1' }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(CodecallError);
      expect(error).toMatchObject({ code: 'PORT_IN_USE', details: { port, host: '127.0.0.1' } });
      expect((error as Error).message).toContain(`127.0.0.1:${port} is taken`);
      expect((await fetch(`${holder.address}/healthz`)).status).toBe(200);
    } finally {
      await holder.close();
    }
  });
});
