import { validateHeaderValue } from 'node:http';
import { CodecallError } from '../errors/index.ts';
import { matchAllowEntry, parseAllowEntry } from '../spec/index.ts';
import type { AllowEntry } from '../spec/index.ts';
import { refused } from './egress-errors.ts';

// Secrets the operator binds to destinations: a program writes `{{secret:NAME}}` in a header and never sees the
// value. The journal holds the placeholder (the request as given), so a secret never lands in storage either.

export interface SecretBinding {
  readonly name: string;
  readonly value: string;
  /** Where the value may go: patterns as in `allow` (`api.example.com`, `*.example.com`, `host:8443`). */
  readonly hosts: readonly string[];
}

interface BoundSecret {
  readonly value: string;
  readonly hosts: readonly AllowEntry[];
}

export type Secrets = ReadonlyMap<string, BoundSecret>;

const NAME = /^[A-Za-z0-9_.-]{1,128}$/;
const PLACEHOLDER = /\{\{secret:([^{}]*)\}\}/g;

function invalidConfig(message: string): CodecallError {
  return new CodecallError('INVALID_CONFIG', `egress secrets: ${message}`);
}

/** The operator's bindings, checked once (INVALID_CONFIG naming the secret, never showing its value). */
export function compileSecrets(bindings: readonly SecretBinding[] = []): Secrets {
  const secrets = new Map<string, BoundSecret>();
  for (const { name, value, hosts } of bindings) {
    if (typeof name !== 'string' || !NAME.test(name))
      throw invalidConfig(`"${String(name)}" is not a secret name (letters, digits, _ . -)`);
    if (secrets.has(name)) throw invalidConfig(`"${name}" is bound twice`);
    if (typeof value !== 'string' || value === '') throw invalidConfig(`"${name}" has no value`);
    try {
      validateHeaderValue('x', value);
    } catch {
      throw invalidConfig(`"${name}" has a value no header may carry (a control character)`);
    }
    if (!Array.isArray(hosts) || hosts.length === 0) throw invalidConfig(`"${name}" is bound to no host`);
    const entries = hosts.map((host) => {
      const entry = typeof host === 'string' ? parseAllowEntry(host) : 'not a string';
      if (typeof entry === 'string') throw invalidConfig(`"${name}": ${entry}`);
      return entry;
    });
    secrets.set(name, { value, hosts: entries });
  }
  return secrets;
}

export function hasPlaceholder(value: string): boolean {
  return value.includes('{{secret:');
}

/** Where a header goes: the matching rule of `allow` entries. */
export interface HostPort {
  readonly host: string;
  readonly port: number;
  readonly defaultPort: number;
}

/**
 * A header value with each placeholder replaced by its secret, when the secret is bound to `to`; EGRESS_REFUSED
 * (reason `secret`) for an unknown name or one bound elsewhere. `sent` collects what went out, to be redacted.
 */
export function injectSecrets(
  header: string,
  value: string,
  secrets: Secrets,
  to: HostPort,
  sent: Map<string, string>,
): string {
  if (!hasPlaceholder(value)) return value;
  return value.replace(PLACEHOLDER, (_whole, name: string) => {
    const secret = secrets.get(name);
    if (secret === undefined)
      throw refused('secret', `header "${header}" names the secret "${name}", which does not exist`, {
        secret: name,
        header,
      });
    if (matchAllowEntry(secret.hosts, to.host, to.port, to.defaultPort) === null)
      throw refused('secret', `the secret "${name}" (header "${header}") is not bound to ${to.host}`, {
        secret: name,
        header,
        host: to.host,
      });
    sent.set(name, secret.value);
    return secret.value;
  });
}

/** `text` with every secret value that went out put back as its placeholder (a server echoing it, say). */
export function redactSecrets(text: string, sent: ReadonlyMap<string, string>): string {
  let out = text;
  for (const [name, value] of sent) out = out.split(value).join(`{{secret:${name}}}`);
  return out;
}
