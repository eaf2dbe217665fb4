import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CodecallError } from '../../src/errors/index.ts';
import {
  newWebhookSecret,
  signWebhook,
  verifyWebhook,
  webhookKey,
} from '../../src/service/webhooks/index.ts';

// The Standard Webhooks example secret; the expected signature is computed here, independently.
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const ID = 'msg_p5jXN8AQM9LWM0D4loKWxJek';
const TIMESTAMP = 1614265330;
const BODY = '{"test": 2432232314}';

function expectedSignature(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  return createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
}

describe('webhook signing', () => {
  it('signs id.timestamp.body with HMAC-SHA256 of the decoded key', () => {
    const headers = signWebhook(SECRET, { id: ID, timestamp: TIMESTAMP, body: BODY });
    expect(headers).toEqual({
      'webhook-id': ID,
      'webhook-timestamp': String(TIMESTAMP),
      'webhook-signature': `v1,${expectedSignature(SECRET, ID, TIMESTAMP, BODY)}`,
    });
    // The published vector of the Standard Webhooks spec for this secret, id, timestamp and body.
    expect(headers['webhook-signature']).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('verifies its own signature and refuses a tampered body, timestamp, id or signature', () => {
    const now = TIMESTAMP * 1000;
    const headers = signWebhook(SECRET, { id: ID, timestamp: TIMESTAMP, body: BODY });
    expect(verifyWebhook(SECRET, headers, BODY, { now })).toBe(true);
    expect(verifyWebhook(SECRET, new Headers({ ...headers }), BODY, { now })).toBe(true);
    expect(verifyWebhook(SECRET, headers, `${BODY} `, { now })).toBe(false);
    expect(
      verifyWebhook(SECRET, { ...headers, 'webhook-timestamp': String(TIMESTAMP + 1) }, BODY, { now }),
    ).toBe(false);
    expect(verifyWebhook(SECRET, { ...headers, 'webhook-id': 'msg_other' }, BODY, { now })).toBe(false);
    expect(verifyWebhook(SECRET, { ...headers, 'webhook-signature': 'v1,AAAA' }, BODY, { now })).toBe(false);
    expect(verifyWebhook(newWebhookSecret(), headers, BODY, { now })).toBe(false);
    // Several signatures (a secret being rotated): one match is enough; other versions are ignored.
    const many = { ...headers, 'webhook-signature': `v1a,xyz v1,AAAA ${headers['webhook-signature']}` };
    expect(verifyWebhook(SECRET, many, BODY, { now })).toBe(true);
  });

  it('refuses a timestamp outside the tolerance', () => {
    const headers = signWebhook(SECRET, { id: ID, timestamp: TIMESTAMP, body: BODY });
    const late = (TIMESTAMP + 301) * 1000;
    expect(verifyWebhook(SECRET, headers, BODY, { now: late })).toBe(false);
    expect(verifyWebhook(SECRET, headers, BODY, { now: late, toleranceSeconds: 400 })).toBe(true);
    expect(verifyWebhook(SECRET, headers, BODY, { now: (TIMESTAMP - 301) * 1000 })).toBe(false);
  });

  it('validates the secret format', () => {
    const secret = newWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(webhookKey(secret)).toHaveLength(32);
    for (const bad of [
      '',
      'MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      'whsec_',
      'whsec_c2hvcnQ=',
      'whsec_not base64!!',
    ]) {
      let error: unknown;
      try {
        webhookKey(bad);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(CodecallError);
      expect((error as CodecallError).code).toBe('INVALID_CONFIG');
      expect((error as CodecallError).message).toMatch(/whsec_/);
    }
  });
});
