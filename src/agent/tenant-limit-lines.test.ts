import { describe, expect, it } from 'vitest';
import { tenantLimitLine } from './tenant-limit-lines.ts';

describe('tenantLimitLine', () => {
  it("says a tool's own limits and the tenant's limits over all of its tools", () => {
    const line = tenantLimitLine({
      quota: { tenant: 'acme', tool: 'web.search', max: 5, period: 'day' },
      allTools: { rate: { tenant: '*', tool: 'all', rate: 1, per: 'second' } },
    });
    expect(line).toBe(
      "At most 5 calls per day (UTC) over all of this tenant's tasks and 1 call per second of all of this " +
        "tenant's tools together; past that a call fails with code TOOL_RATE_LIMITED or TOOL_QUOTA_EXCEEDED " +
        'and details.retry_after_seconds (when to try again).',
    );
  });
  it('says the all-tools limits alone', () => {
    expect(
      tenantLimitLine({ allTools: { quota: { tenant: 'acme', tool: 'all', max: 9, period: 'hour' } } }),
    ).toMatch(
      /^At most 9 calls per hour \(UTC\) of all of this tenant's tools together; .*TOOL_QUOTA_EXCEEDED/,
    );
  });
});
