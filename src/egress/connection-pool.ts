import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { Address, Destination } from './vet-destination.ts';

/** How long an idle connection waits for the next request (a server's hint, when shorter, wins). */
const IDLE_MS = 4_000;
/** Idle connections kept per destination. */
const IDLE_PER_DESTINATION = 4;
/** Destinations with a pool; the least recently used one past it is dropped (its idle connections time out). */
const MAX_DESTINATIONS = 128;

/**
 * Keep-alive connections of the egress, one pool per destination *and vetted address set*: a connection is only
 * reused by a request whose own hop was vetted to the same addresses, so pinning (no DNS rebinding) holds as for a
 * fresh connection. What a connection carries is per request (headers, injected secrets); a TLS handshake to an
 * API is the cost it saves (tens of milliseconds, against a request's own).
 */
export class ConnectionPool {
  readonly #agents = new Map<string, HttpAgent>();

  agentFor(to: Destination, addresses: readonly Address[]): HttpAgent {
    const key = [to.url.protocol, to.connectHost, to.port, ...addresses.map((a) => a.address)].join(' ');
    let agent = this.#agents.get(key);
    if (agent !== undefined) {
      this.#agents.delete(key);
    } else {
      const options = {
        keepAlive: true,
        maxFreeSockets: IDLE_PER_DESTINATION,
        timeout: IDLE_MS,
        scheduling: 'lifo' as const,
      };
      agent = to.url.protocol === 'https:' ? new HttpsAgent(options) : new HttpAgent(options);
      const oldest = this.#agents.keys().next();
      if (this.#agents.size >= MAX_DESTINATIONS && oldest.done !== true) this.#agents.delete(oldest.value);
    }
    this.#agents.set(key, agent);
    return agent;
  }

  /** Closes the idle connections (requests under way finish on theirs). */
  closeIdle(): void {
    for (const agent of this.#agents.values()) {
      for (const sockets of Object.values(agent.freeSockets))
        for (const socket of sockets ?? []) socket.destroy();
    }
  }
}
