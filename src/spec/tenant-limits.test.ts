import { describe, expect, it } from 'vitest';
import { CodecallError } from '../errors/index.ts';
import {
  bucketOf,
  limitsOfCall,
  parseToolQuotas,
  parseToolRateLimits,
  periodOf,
  retryAfterSeconds,
} from './tenant-limits.ts';
import { hasToken, msUntilToken, refilledTokens } from './usage-store.ts';

const fieldOf = (f: () => unknown): unknown => {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(CodecallError);
    expect((e as CodecallError).code).toBe('INVALID_ARGUMENT');
    return (e as CodecallError).details?.field;
  }
  throw new Error('expected INVALID_ARGUMENT');
};

describe('token bucket math', () => {
  const terms = { perSecond: 2, burst: 3 };
  it('refills with time up to the burst, never from a clock that went back', () => {
    expect(refilledTokens(0, 1000, 1250, terms)).toBe(0.5);
    expect(refilledTokens(1, 1000, 1_000_000, terms)).toBe(3);
    expect(refilledTokens(0.5, 1000, 500, terms)).toBe(0.5);
  });
  it('says how long until the next token, at least 1 ms', () => {
    expect(msUntilToken(0, terms)).toBe(500);
    expect(msUntilToken(0.75, terms)).toBe(125);
    expect(msUntilToken(0.9999999, terms)).toBe(1);
    expect(hasToken(1 - 1e-12)).toBe(true);
    expect(hasToken(0.999)).toBe(false);
  });
  it('makes a bucket of a rule: rate per period, burst the rate by default (at least 1)', () => {
    expect(bucketOf({ tenant: '*', tool: '*', rate: 30, per: 'minute' })).toEqual({
      perSecond: 0.5,
      burst: 30,
    });
    expect(bucketOf({ tenant: '*', tool: '*', rate: 0.5, per: 'second' })).toEqual({
      perSecond: 0.5,
      burst: 1,
    });
    expect(bucketOf({ tenant: '*', tool: '*', rate: 36, per: 'hour', burst: 2 })).toEqual({
      perSecond: 0.01,
      burst: 2,
    });
  });
  it('gives the wait in seconds, rounded up to the millisecond', () => {
    expect(retryAfterSeconds(1234.2)).toBe(1.235);
    expect(retryAfterSeconds(-5)).toBe(0);
  });
});

describe('quota periods (UTC calendar)', () => {
  const at = Date.UTC(2026, 1, 28, 13, 45, 10);
  it('holds the hour, the day and the month of a moment', () => {
    expect(periodOf(at, 'hour')).toEqual({
      start: Date.UTC(2026, 1, 28, 13),
      end: Date.UTC(2026, 1, 28, 14),
    });
    expect(periodOf(at, 'day')).toEqual({ start: Date.UTC(2026, 1, 28), end: Date.UTC(2026, 2, 1) });
    expect(periodOf(at, 'month')).toEqual({ start: Date.UTC(2026, 1, 1), end: Date.UTC(2026, 2, 1) });
    expect(periodOf(Date.UTC(2026, 11, 31, 23), 'month').end).toBe(Date.UTC(2027, 0, 1));
  });
});

describe('the rules a call is under', () => {
  const rateLimits = parseToolRateLimits([
    { tenant: 'acme', tool: 'web.search', rate: 1, per: 'second' },
    { tenant: 'acme', tool: '*', rate: 2, per: 'second' },
    { tenant: '*', tool: 'web.search', rate: 3, per: 'second' },
    { tenant: '*', tool: '*', rate: 4, per: 'second' },
  ]);
  const quotas = parseToolQuotas([{ tenant: 'globex', tool: '*', max: 10, period: 'day' }]);
  const rateOf = (tenant: string, tool: string) =>
    limitsOfCall({ rateLimits, quotas }, tenant, tool)?.rate?.rate;
  it('takes the most specific: (tenant, tool), (tenant, *), (*, tool), (*, *)', () => {
    expect(rateOf('acme', 'web.search')).toBe(1);
    expect(rateOf('acme', 'web.fetch')).toBe(2);
    expect(rateOf('globex', 'web.search')).toBe(3);
    expect(rateOf('globex', 'web.fetch')).toBe(4);
    expect(limitsOfCall({ rateLimits, quotas }, 'globex', 'a.b')?.quota?.max).toBe(10);
    expect(limitsOfCall({ rateLimits, quotas }, 'acme', 'a.b')?.quota).toBeUndefined();
  });
  it('is none when no rule names the tenant or the tool', () => {
    const only = parseToolRateLimits([{ tenant: 'acme', tool: 'web.search', rate: 1, per: 'hour' }]);
    expect(limitsOfCall({ rateLimits: only, quotas: [] }, 'acme', 'web.fetch')).toBeNull();
    expect(limitsOfCall({ rateLimits: only, quotas: [] }, 'globex', 'web.search')).toBeNull();
  });
});

describe('checking the rules', () => {
  it("names a tool as programs call it: an MCP server's member and a name with '-' too", () => {
    const named = ['tools.github.create_issue', 'tools.lookup-user'].map((tool) => ({
      tenant: 'a',
      tool,
      rate: 1,
      per: 'second' as const,
    }));
    expect(parseToolRateLimits(named)).toHaveLength(2);
    for (const tool of ['tools.a.b.c', 'tools.-x', 'tools.a b', 'tools.']) {
      expect(fieldOf(() => parseToolRateLimits([{ tenant: 'a', tool, rate: 1, per: 'second' }]))).toBe(
        'toolRateLimits[0].tool',
      );
    }
  });

  it('names the field of a bad rule', () => {
    expect(fieldOf(() => parseToolRateLimits({}))).toBe('toolRateLimits');
    expect(
      fieldOf(() => parseToolRateLimits([{ tenant: 'a', tool: 'search', rate: 1, per: 'second' }])),
    ).toBe('toolRateLimits[0].tool');
    expect(fieldOf(() => parseToolRateLimits([{ tenant: 'a', tool: '*', rate: 0, per: 'second' }]))).toBe(
      'toolRateLimits[0].rate',
    );
    expect(fieldOf(() => parseToolRateLimits([{ tenant: 'a', tool: '*', rate: 1, per: 'day' }]))).toBe(
      'toolRateLimits[0].per',
    );
    expect(
      fieldOf(() => parseToolRateLimits([{ tenant: 'a', tool: '*', rate: 1, per: 'second', burst: 0.5 }])),
    ).toBe('toolRateLimits[0].burst');
    expect(fieldOf(() => parseToolRateLimits([{ tenant: '', tool: '*', rate: 1, per: 'second' }]))).toBe(
      'toolRateLimits[0].tenant',
    );
    expect(fieldOf(() => parseToolQuotas([{ tenant: 'a', tool: '*', max: 1.5, period: 'day' }]))).toBe(
      'toolQuotas[0].max',
    );
    expect(fieldOf(() => parseToolQuotas([{ tenant: 'a', tool: '*', max: 1, period: 'week' }]))).toBe(
      'toolQuotas[0].period',
    );
    expect(
      fieldOf(() => parseToolQuotas([{ tenant: 'a', tool: 'egress.fetch', max: 1, period: 'day' }])),
    ).toBe('toolQuotas[0].tool');
    expect(
      fieldOf(() => parseToolQuotas([{ tenant: 'a', tool: '*', max: 1, period: 'day', extra: 1 }])),
    ).toBe('toolQuotas[0]');
  });
  it('refuses two rules for the same tenant and tool', () => {
    const twice = [
      { tenant: 'a', tool: '*', max: 1, period: 'day' },
      { tenant: 'a', tool: '*', max: 2, period: 'month' },
    ];
    expect(fieldOf(() => parseToolQuotas(twice))).toBe('toolQuotas');
  });
  it('takes no rules as none', () => {
    expect(parseToolRateLimits(undefined)).toEqual([]);
    expect(parseToolQuotas(null)).toEqual([]);
  });
});

describe('limits over all of a tenant’s tools together (tool "all")', () => {
  const limits = {
    rateLimits: parseToolRateLimits([
      { tenant: 'acme', tool: 'web.search', rate: 5, per: 'second' },
      { tenant: '*', tool: 'all', rate: 50, per: 'minute' },
      // A (tenant, *) rule is per tool: it never stands in for the all-tools one.
      { tenant: 'acme', tool: '*', rate: 9, per: 'second' },
    ]),
    quotas: parseToolQuotas([{ tenant: 'acme', tool: 'all', max: 100, period: 'day' }]),
  };
  it("puts a call under its tool's rules and under the tenant's all-tools rules", () => {
    expect(limitsOfCall(limits, 'acme', 'web.search')).toEqual({
      rate: { tenant: 'acme', tool: 'web.search', rate: 5, per: 'second' },
      allTools: {
        rate: { tenant: '*', tool: 'all', rate: 50, per: 'minute' },
        quota: { tenant: 'acme', tool: 'all', max: 100, period: 'day' },
      },
    });
    expect(limitsOfCall(limits, 'globex', 'db.query')).toEqual({
      allTools: { rate: { tenant: '*', tool: 'all', rate: 50, per: 'minute' } },
    });
  });
  it('takes a tenant’s own all-tools rule over the * tenants’', () => {
    const own = parseToolRateLimits([
      { tenant: '*', tool: 'all', rate: 1, per: 'second' },
      { tenant: 'acme', tool: 'all', rate: 2, per: 'second' },
    ]);
    expect(limitsOfCall({ rateLimits: own, quotas: [] }, 'acme', 'a.b')?.allTools?.rate?.rate).toBe(2);
  });
  it('refuses a tool name that is neither a tool, "*" nor "all"', () => {
    expect(fieldOf(() => parseToolQuotas([{ tenant: 'a', tool: 'everything', max: 1, period: 'day' }]))).toBe(
      'toolQuotas[0].tool',
    );
  });
});
