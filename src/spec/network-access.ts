import { CodecallError } from '../errors/index.ts';
import type { NetworkAccess } from './egress.ts';
import { parseAllowEntry } from './allow-entry.ts';
import { isRecord } from './is-record.ts';
import { invertedNames, renamedKeys } from './wire-form.ts';

/** Most entries of `allow` (and of `methods`): a task names the few services it talks to, not a crawl list. */
export const MAX_ACCESS_ENTRIES = 100;

export const DEFAULT_METHODS: readonly string[] = [
  'GET',
  'HEAD',
  'POST',
  'PUT',
  'PATCH',
  'DELETE',
  'OPTIONS',
];

/** An HTTP method is a token (RFC 9110). */
export const METHOD_TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * Never sent: CONNECT asks for a tunnel (the allow list would no longer see the traffic), TRACE echoes the request
 * back, injected secrets included.
 */
export const NEVER_METHODS: readonly string[] = ['CONNECT', 'TRACE'];

/** The longest a task may ask one request to take (a day); the operator's ceiling usually caps it far lower. */
const MAX_TIMEOUT_SECONDS = 86_400;

const KEYS = ['allow', 'methods', 'max_requests', 'max_bytes', 'timeout_seconds', 'allow_http'] as const;

/**
 * A task's `tool_constraints.network_access` as the wire gives it (snake_case), checked: null when it allows
 * nothing (`false`, absent). `true` is refused: a task names the hosts it may reach. INVALID_ARGUMENT naming
 * `field` otherwise.
 */
export function parseNetworkAccess(
  value: unknown,
  field = 'tool_constraints.network_access',
): NetworkAccess | null {
  const bad = (message: string, more: Record<string, unknown> = {}): never => {
    throw new CodecallError('INVALID_ARGUMENT', `${field}: ${message}`, { details: { field, ...more } });
  };
  if (value === undefined || value === null || value === false) return null;
  if (value === true)
    return bad('true is not enough: give the hosts the task may reach, as { "allow": ["api.example.com"] }');
  if (!isRecord(value)) return bad('must be false or an object with an "allow" list');
  for (const key of Object.keys(value)) {
    if (!(KEYS as readonly string[]).includes(key)) bad(`unknown key "${key}" (known: ${KEYS.join(', ')})`);
  }
  const list = (key: string, raw: unknown): string[] => {
    if (!Array.isArray(raw) || raw.length === 0 || !raw.every((x) => typeof x === 'string'))
      return bad(`${key} must be a non-empty list of strings`);
    if (raw.length > MAX_ACCESS_ENTRIES) return bad(`${key} has more than ${MAX_ACCESS_ENTRIES} entries`);
    return raw;
  };
  if (value.allow === undefined) bad('an "allow" list of hosts is needed (as ["api.example.com"])');
  const allow: string[] = [];
  for (const raw of list('allow', value.allow)) {
    const entry = parseAllowEntry(raw);
    if (typeof entry === 'string') bad(`allow: ${entry}`, { entry: raw });
    else if (!allow.includes(entry.text)) allow.push(entry.text);
  }
  const access: { -readonly [K in keyof NetworkAccess]: NetworkAccess[K] } = { allow };
  if (value.methods !== undefined) {
    const methods: string[] = [];
    for (const raw of list('methods', value.methods)) {
      const method = raw.toUpperCase();
      if (!METHOD_TOKEN.test(method)) bad(`methods: "${raw}" is not an HTTP method`);
      if (NEVER_METHODS.includes(method)) bad(`methods: ${method} is not allowed`);
      if (!methods.includes(method)) methods.push(method);
    }
    access.methods = methods;
  }
  const count = (key: 'max_requests' | 'max_bytes'): number | undefined => {
    const raw = value[key];
    if (raw === undefined) return undefined;
    if (typeof raw !== 'number' || !Number.isSafeInteger(raw) || raw < 1)
      return bad(`${key} must be an integer of at least 1`);
    return raw;
  };
  const maxRequests = count('max_requests');
  if (maxRequests !== undefined) access.maxRequests = maxRequests;
  const maxBytes = count('max_bytes');
  if (maxBytes !== undefined) access.maxBytes = maxBytes;
  const timeout = value.timeout_seconds;
  if (timeout !== undefined) {
    if (
      typeof timeout !== 'number' ||
      !Number.isFinite(timeout) ||
      timeout <= 0 ||
      timeout > MAX_TIMEOUT_SECONDS
    )
      bad(`timeout_seconds must be a number of seconds above 0 and at most ${MAX_TIMEOUT_SECONDS}`);
    access.timeoutSeconds = timeout as number;
  }
  if (value.allow_http !== undefined) {
    if (typeof value.allow_http !== 'boolean') bad('allow_http must be a boolean');
    access.allowHttp = value.allow_http as boolean;
  }
  return access;
}

/** A task's network access as the wire writes it (snake_case): what submissions send and task views show. */
export interface NetworkAccessWire {
  readonly allow: readonly string[];
  readonly methods?: readonly string[];
  readonly max_requests?: number;
  readonly max_bytes?: number;
  readonly timeout_seconds?: number;
  readonly allow_http?: boolean;
}

/** The runtime's names of the wire's fields (the others are spelled alike). */
const RUNTIME_NAMES: Readonly<Record<string, string>> = {
  max_requests: 'maxRequests',
  max_bytes: 'maxBytes',
  timeout_seconds: 'timeoutSeconds',
  allow_http: 'allowHttp',
};
const WIRE_NAMES = invertedNames(RUNTIME_NAMES);

/** A task's network access in the wire's form. */
export function networkAccessToWire(access: NetworkAccess): NetworkAccessWire {
  return renamedKeys(access, WIRE_NAMES) as NetworkAccessWire;
}

/**
 * A task's `network_access` in the runtime's form (camelCase) checked as the wire's is (`parseNetworkAccess`):
 * false or absent is none; `true` is refused (say where). Throws a CodecallError INVALID_ARGUMENT naming the field.
 */
export function checkNetworkAccess(
  value: unknown,
  field = 'tool_constraints.network_access',
): NetworkAccess | false {
  return parseNetworkAccess(renamedKeys(value, WIRE_NAMES), field) ?? false;
}

/**
 * The wire's snake_case `network_access` in the runtime's form, renamed only: typed as what it should be, it is
 * checked where every submission is (`checkNetworkAccess`), which refuses `true` and any other shape.
 */
export function networkAccessFromWire(value: unknown): NetworkAccess | false {
  return renamedKeys(value, RUNTIME_NAMES) as NetworkAccess | false;
}
