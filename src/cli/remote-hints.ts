import type { CodecallError } from '../errors/index.ts';
import { DEFAULT_PORT } from '../service/config.ts';

const SERVE = `codecall serve --db PATH --tools MODULE (it listens on http://127.0.0.1:${DEFAULT_PORT} by default)`;

/**
 * What to do next when a remote command (`--url`) fails for a reason the command line can fix: nothing answers,
 * no codecall API there, no key or a refused one. Names the URL as given; null for the service's own answers.
 */
export function remoteHint(e: CodecallError, url: string, keyGiven: boolean): string | null {
  switch (e.code) {
    case 'SERVICE_UNREACHABLE':
      return `nothing answers at ${url}: start a service with \`${SERVE}\`, or give its address with --url (or CODECALL_URL)`;
    case 'UNAUTHORIZED':
      return keyGiven
        ? `${url} does not know this key: check --key (or CODECALL_KEY); \`codecall keys list --db PATH\` on the service's host lists its keys, \`codecall keys create --tenant NAME --db PATH\` makes one`
        : `${url} needs an API key: pass --key KEY or set CODECALL_KEY (a first \`codecall serve\` prints an admin key once; \`codecall keys create --tenant NAME --db PATH\` makes one)`;
    case 'KEY_REVOKED':
      return `this key was revoked at ${url}: make another with \`codecall keys create --tenant NAME --db PATH\` and pass it with --key (or CODECALL_KEY)`;
    case 'NOT_FOUND':
      // A route the server does not have (its own 404, or another server's page): not a task that is missing.
      if (e.details.route !== undefined || e.details.envelope === false) {
        return `${url} has no codecall API (${e.message}): give the root address \`codecall serve\` printed, e.g. --url http://127.0.0.1:${DEFAULT_PORT}`;
      }
      return null;
    default:
      return null;
  }
}
