/** How much of the event loop one tenant's requests may take while another tenant is also asking (ADR 0039). */
export interface RequestShareOptions {
  /** The fraction of the event loop a tenant's requests may take while another tenant is active (0-1; 1: no bound). */
  readonly share: number;
  /** Event-loop time (ms) a tenant may take beyond its share in a burst. */
  readonly burstMs: number;
  /** Requests of one tenant held waiting for their share at once; one more is refused. */
  readonly maxHeld: number;
  /** The longest a request is held; a tenant further behind than this is refused with Retry-After. */
  readonly maxWaitMs: number;
  /** Another tenant's request within this many ms makes the loop contended (default 1000). */
  readonly windowMs?: number;
}

export type Admission =
  | { readonly kind: 'go' }
  | { readonly kind: 'wait'; readonly ms: number }
  | { readonly kind: 'refuse'; readonly retryAfterS: number; readonly why: 'held' | 'behind' };

interface Bucket {
  /** Event-loop ms the tenant may still take; below 0 it is behind its share. */
  tokens: number;
  at: number;
  held: number;
}

/**
 * A token bucket of event-loop time per tenant, refilled at `share` ms per ms. It is work-conserving: a tenant
 * alone on the server is never held, and its debt is forgiven; only while another tenant made a request within
 * the window does a tenant past its share wait (or, too far behind, get refused).
 */
export class RequestShare {
  readonly #buckets = new Map<string, Bucket>();
  readonly #options: Required<RequestShareOptions>;
  // The two most recent distinct tenants and when each last asked: enough to tell whether another was active.
  #latest: { tenant: string; at: number } | null = null;
  #other: { tenant: string; at: number } | null = null;

  constructor(options: RequestShareOptions) {
    this.#options = { windowMs: 1000, ...options };
  }

  get enabled(): boolean {
    return this.#options.share < 1;
  }

  /** Whether a request of `tenant` may run now; call `seen` for each request first. */
  admit(tenant: string, now: number): Admission {
    if (!this.enabled) return { kind: 'go' };
    const bucket = this.#refill(tenant, now);
    // Within a nanosecond of even: a wait of exactly the debt's refill ends it, whatever the float rounding.
    if (bucket.tokens >= -1e-6 || !this.#contended(tenant, now)) return { kind: 'go' };
    // The debt is floored at maxWaitMs of refill (charge), so the wait is at most that (up to rounding).
    const ms = Math.min(this.#options.maxWaitMs, Math.ceil(-bucket.tokens / this.#options.share));
    const retryAfterS = Math.max(1, Math.ceil(ms / 1000));
    // maxHeld 0: never hold, refuse at once.
    if (this.#options.maxHeld === 0) return { kind: 'refuse', retryAfterS, why: 'behind' };
    if (bucket.held >= this.#options.maxHeld) return { kind: 'refuse', retryAfterS, why: 'held' };
    return { kind: 'wait', ms };
  }

  /** Records that `tenant` asked at `now` (what makes the loop contended for the others). */
  seen(tenant: string, now: number): void {
    if (this.#latest?.tenant === tenant) this.#latest.at = now;
    else {
      this.#other = this.#latest;
      this.#latest = { tenant, at: now };
    }
  }

  /** A request of `tenant` is held (+1) or let go (-1). */
  hold(tenant: string, delta: 1 | -1): void {
    const bucket = this.#buckets.get(tenant);
    if (bucket !== undefined) bucket.held = Math.max(0, bucket.held + delta);
  }

  /** Charges `ms` of event-loop time to `tenant`; alone on the server, it owes nothing. */
  charge(tenant: string, ms: number, now: number): void {
    if (!this.enabled || !(ms > 0)) return;
    const bucket = this.#refill(tenant, now);
    // Behind by at most maxWaitMs of refill: a burst of expensive requests costs a bounded wait, not a ban.
    const floor = this.#contended(tenant, now) ? -this.#options.share * this.#options.maxWaitMs : 0;
    bucket.tokens = Math.max(floor, bucket.tokens - ms);
  }

  #contended(tenant: string, now: number): boolean {
    const other = this.#latest?.tenant === tenant ? this.#other : this.#latest;
    return other !== null && now - other.at <= this.#options.windowMs;
  }

  #refill(tenant: string, now: number): Bucket {
    let bucket = this.#buckets.get(tenant);
    if (bucket === undefined) {
      if (this.#buckets.size >= 10_000) this.#prune(now);
      bucket = { tokens: this.#options.burstMs, at: now, held: 0 };
      this.#buckets.set(tenant, bucket);
      return bucket;
    }
    const elapsed = Math.max(0, now - bucket.at);
    bucket.tokens = Math.min(this.#options.burstMs, bucket.tokens + elapsed * this.#options.share);
    bucket.at = now;
    return bucket;
  }

  /** Forgets tenants whose bucket would be full again and that hold nothing: they start full anyway. */
  #prune(now: number): void {
    for (const [tenant, b] of this.#buckets) {
      const full = b.tokens + (now - b.at) * this.#options.share >= this.#options.burstMs;
      if (full && b.held === 0) this.#buckets.delete(tenant);
    }
  }
}
