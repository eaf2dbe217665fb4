// The receiver of a chaos run's webhooks: records every delivery and checks its Standard Webhooks signature on
// its own (HMAC-SHA256 over `id.timestamp.body`, keyed with the secret's base64 bytes), not with codecall's code.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Delivery {
  readonly id: string;
  readonly type: string;
  readonly taskId: string | null;
  readonly batchId: string | null;
  readonly signed: boolean;
}

export interface WebhookReceiver {
  readonly url: string;
  readonly secret: string;
  readonly deliveries: readonly Delivery[];
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const key = randomBytes(32);
  const secret = `whsec_${key.toString('base64')}`;
  const deliveries: Delivery[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const id = String(req.headers['webhook-id'] ?? '');
      const timestamp = String(req.headers['webhook-timestamp'] ?? '');
      const expected = Buffer.from(
        createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64'),
      );
      const signed = String(req.headers['webhook-signature'] ?? '')
        .split(' ')
        .some((s) => {
          const given = Buffer.from(s.startsWith('v1,') ? s.slice(3) : '');
          return given.length === expected.length && timingSafeEqual(given, expected);
        });
      let payload: { type?: string; data?: { task_id?: string; batch_id?: string } } = {};
      try {
        payload = JSON.parse(body) as typeof payload;
      } catch {
        // recorded as unsigned-looking: a body that is not JSON is a failure of its own
      }
      deliveries.push({
        id,
        type: payload.type ?? '?',
        taskId: payload.type === 'batch.completed' ? null : (payload.data?.task_id ?? null),
        batchId: payload.data?.batch_id ?? null,
        signed,
      });
      res.writeHead(204).end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    secret,
    deliveries,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
