import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { CodecallError } from '../../errors/index.ts';

/** Standard Webhooks secrets are `whsec_` + base64 of the HMAC key. */
const SECRET_PREFIX = 'whsec_';
const MIN_KEY_BYTES = 16;
/** How far a receiver accepts `webhook-timestamp` from its own clock (the Standard Webhooks default). */
export const DEFAULT_TOLERANCE_SECONDS = 300;

// A type, not an interface, so it passes as a plain header record.
export type WebhookHeaders = {
  readonly 'webhook-id': string;
  /** Unix seconds. */
  readonly 'webhook-timestamp': string;
  /** `v1,<base64 HMAC-SHA256>`; a receiver may get several, space-separated, while a secret is rotated. */
  readonly 'webhook-signature': string;
};

/** A new secret: 32 random bytes. */
export function newWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

/** The HMAC key of a `whsec_<base64>` secret; INVALID_CONFIG for anything else. */
export function webhookKey(secret: string): Buffer {
  const invalid = (why: string): CodecallError =>
    new CodecallError(
      'INVALID_CONFIG',
      `webhook secret must be "whsec_" + base64 of at least 16 bytes: ${why}`,
      {
        details: { field: 'webhook_secret' },
      },
    );
  if (!secret.startsWith(SECRET_PREFIX)) throw invalid('missing the whsec_ prefix');
  const encoded = secret.slice(SECRET_PREFIX.length);
  // Buffer.from ignores bad characters, so check the alphabet and padding before decoding.
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(encoded) || encoded.length % 4 !== 0) throw invalid('not valid base64');
  const key = Buffer.from(encoded, 'base64');
  if (key.length < MIN_KEY_BYTES) throw invalid(`the key has ${key.length} bytes`);
  return key;
}

function signature(key: Buffer, id: string, timestamp: string, body: string): string {
  return createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
}

/** The headers of one delivery attempt (`timestamp` in unix seconds, fresh per attempt). */
export function signWebhook(
  secret: string | Buffer,
  message: { readonly id: string; readonly timestamp: number; readonly body: string },
): WebhookHeaders {
  const key = typeof secret === 'string' ? webhookKey(secret) : secret;
  const timestamp = String(Math.floor(message.timestamp));
  return {
    'webhook-id': message.id,
    'webhook-timestamp': timestamp,
    'webhook-signature': `v1,${signature(key, message.id, timestamp, message.body)}`,
  };
}

/** Node's IncomingHttpHeaders, a fetch Headers, or a plain record. */
export type HeaderSource =
  { get(name: string): string | null } | Readonly<Record<string, string | readonly string[] | undefined>>;

function header(headers: HeaderSource, name: string): string | null {
  if (typeof headers.get === 'function') return (headers as { get(n: string): string | null }).get(name);
  const record = headers as Readonly<Record<string, string | readonly string[] | undefined>>;
  const value = record[name] ?? Object.entries(record).find(([k]) => k.toLowerCase() === name)?.[1];
  return value === undefined ? null : typeof value === 'string' ? value : value.join(' ');
}

/**
 * For receivers (and tests): true when one of the `v1` signatures matches `body` (the exact bytes received) and
 * the timestamp is within the tolerance of `now` (epoch ms, default the clock), which bounds replays.
 */
export function verifyWebhook(
  secret: string,
  headers: HeaderSource,
  body: string,
  options: { readonly toleranceSeconds?: number; readonly now?: number } = {},
): boolean {
  const key = webhookKey(secret);
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (id === null || timestamp === null || signatures === null || !/^\d+$/.test(timestamp)) return false;
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const nowSeconds = Math.floor((options.now ?? Date.now()) / 1000);
  if (Math.abs(nowSeconds - Number(timestamp)) > tolerance) return false;
  const expected = Buffer.from(signature(key, id, timestamp, body));
  return signatures.split(' ').some((candidate) => {
    const [version, value] = candidate.split(',', 2);
    if (version !== 'v1' || value === undefined) return false;
    const given = Buffer.from(value);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
