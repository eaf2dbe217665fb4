import { z } from 'zod';
import { CodecallError } from '../errors/index.ts';

/** One allowed `Host`: a name or IP (`[::1]` for IPv6), with `:port` to allow that port only; `*` allows any. */
const hostEntry = z
  .string()
  .trim()
  .toLowerCase()
  .regex(
    /^(\*|\[[0-9a-f:.]+\](:[0-9]{1,5})?|[a-z0-9_.-]+(:[0-9]{1,5})?)$/,
    'must be a host name, IP or [IPv6], optionally :port, or *',
  );

/** Who may reach the server in `--insecure-no-auth` mode and under which `Host` names (issue 17 item 7, ADR 0022). */
export const originConfigShape = {
  /** Lets a no-auth server listen on a non-loopback address (default false: `serve` refuses to start). */
  allowRemoteNoAuth: z.boolean().default(false),
  /**
   * The `Host` names requests may carry (comma-separated in a flag or variable). Default null: in no-auth mode
   * localhost, 127.0.0.1, [::1] (any port), any IP literal and the configured host; with keys, no check.
   * Set, it is checked in both modes.
   */
  allowedHosts: z.preprocess(
    (value) => (typeof value === 'string' ? value.split(',').filter((s) => s.trim() !== '') : value),
    z.array(hostEntry).min(1).max(256).nullable().default(null),
  ),
};

/** Addresses only this machine reaches: 127.0.0.0/8, ::1 (also IPv4-mapped) and the name localhost. */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  return (
    h === 'localhost' ||
    h === '::1' ||
    /^(::ffff:)?127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h) ||
    /^(0:){7}1$/.test(h)
  );
}

/**
 * A no-auth server makes every caller admin: it listens on loopback only unless the operator said otherwise.
 * Throws INVALID_CONFIG naming the flag; checked before the port is bound.
 */
export function checkNoAuthBinding(config: {
  readonly insecureNoAuth: boolean;
  readonly allowRemoteNoAuth: boolean;
  readonly host: string;
}): void {
  if (!config.insecureNoAuth || config.allowRemoteNoAuth || isLoopbackHost(config.host)) return;
  throw new CodecallError(
    'INVALID_CONFIG',
    `--insecure-no-auth listens on loopback only (127.0.0.1, ::1, localhost), not on ${config.host}: ` +
      'every caller would be admin. Pass --allow-remote-no-auth (config allowRemoteNoAuth) to listen there anyway',
    { details: { field: 'host', host: config.host } },
  );
}
