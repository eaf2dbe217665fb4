import { describe, expect, it } from 'vitest';
import { RequestShare } from '../../src/http/request-share.ts';

// The bucket alone, on a clock the test moves: a tenant past its share waits only while another tenant is
// active, never longer than maxWaitMs, and a tenant alone owes nothing.

const options = { share: 0.25, burstMs: 100, maxHeld: 2, maxWaitMs: 1000, windowMs: 1000 };

describe('RequestShare', () => {
  it('lets a tenant alone on the server take the whole loop, and forgives what it took', () => {
    const s = new RequestShare(options);
    for (let t = 0; t < 100; t++) {
      s.seen('b', t);
      expect(s.admit('b', t)).toEqual({ kind: 'go' });
      s.charge('b', 50, t);
    }
    // Another tenant arrives: b starts from an empty bucket, not from 5 s of debt.
    s.seen('a', 100);
    s.seen('b', 101);
    expect(s.admit('b', 101)).toEqual({ kind: 'go' });
  });

  it('holds a tenant past its share while another is active, for what its debt takes to refill', () => {
    const s = new RequestShare(options);
    s.seen('a', 0);
    s.seen('b', 0);
    expect(s.admit('b', 0)).toEqual({ kind: 'go' });
    s.charge('b', 150, 0); // the burst (100) and 50 ms more
    expect(s.admit('b', 0)).toEqual({ kind: 'wait', ms: 200 }); // 50 ms at 0.25 ms per ms
    expect(s.admit('b', 100)).toEqual({ kind: 'wait', ms: 100 });
    expect(s.admit('b', 200)).toEqual({ kind: 'go' });
    // The other tenant is not held by b's debt.
    expect(s.admit('a', 0)).toEqual({ kind: 'go' });
  });

  it('stops holding once the other tenant has been quiet for the window', () => {
    const s = new RequestShare(options);
    s.seen('a', 0);
    s.seen('b', 0);
    s.charge('b', 200, 0);
    expect(s.admit('b', 10).kind).toBe('wait');
    s.seen('b', 1500);
    expect(s.admit('b', 1500)).toEqual({ kind: 'go' });
  });

  it('bounds the debt by maxWaitMs and refuses once maxHeld requests wait', () => {
    const s = new RequestShare(options);
    s.seen('a', 0);
    s.seen('b', 0);
    s.charge('b', 10_000, 0);
    const first = s.admit('b', 0);
    expect(first).toEqual({ kind: 'wait', ms: 1000 });
    s.hold('b', 1);
    s.hold('b', 1);
    expect(s.admit('b', 0)).toEqual({ kind: 'refuse', retryAfterS: 1, why: 'held' });
    s.hold('b', -1);
    expect(s.admit('b', 0).kind).toBe('wait');
  });

  it('is off at a share of 1', () => {
    const s = new RequestShare({ ...options, share: 1 });
    s.seen('a', 0);
    s.seen('b', 0);
    s.charge('b', 10_000, 0);
    expect(s.enabled).toBe(false);
    expect(s.admit('b', 0)).toEqual({ kind: 'go' });
  });

  it('tells contention apart among many tenants by the most recent other one', () => {
    const s = new RequestShare(options);
    s.seen('a', 0);
    s.seen('b', 500);
    s.seen('c', 600);
    s.seen('b', 700);
    s.charge('b', 1000, 700);
    // c asked 100 ms ago: b is contended.
    expect(s.admit('b', 700).kind).toBe('wait');
    // Later than the window after c (and a): b is alone.
    expect(s.admit('b', 1700)).toEqual({ kind: 'go' });
  });

  it('lets a request go after exactly the wait it was given, whatever the float rounding', () => {
    const s = new RequestShare({ share: 0.00005, burstMs: 0, maxHeld: 1, maxWaitMs: 1000, windowMs: 60_000 });
    s.seen('a', 0.1);
    s.seen('b', 0.3);
    s.charge('b', 0.7, 0.3);
    const first = s.admit('b', 0.30000001);
    expect(first).toEqual({ kind: 'wait', ms: 1000 });
    expect(s.admit('b', 0.30000001 + 1000)).toEqual({ kind: 'go' });
  });
});
