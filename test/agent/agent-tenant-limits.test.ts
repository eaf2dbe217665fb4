// Tenant limits in agent mode (ADR 0045): the prompt says the tool's rate limit and quota for the task's tenant
// (another tenant's prompt says nothing), and the runtime refuses a step's call past them as for any program.
import { describe, expect, it } from 'vitest';
import { reply } from '../model/scripted-model-server.ts';
import { js, useAgentFixture } from './agent-fixture.ts';

describe('agent, tenant limits', () => {
  const fx = useAgentFixture('agent-tenant-limits', {
    runtime: {
      toolRateLimits: [{ tenant: 'acme', tool: 'tools.get_price', rate: 1, per: 'hour', burst: 2 }],
      toolQuotas: [{ tenant: 'acme', tool: 'tools.get_price', max: 100, period: 'day' }],
    },
  });
  const systemPrompt = (i: number): string =>
    (fx.model.requests[i]?.body.messages as { content: string }[])[0]?.content ?? '';

  it("says the tenant's limits in the prompt, and refuses the call past them", async () => {
    fx.model.push(
      reply({
        content: js(
          'const r = await Promise.allSettled(["tea", "coffee", "milk"].map((product) => tools.get_price({ product })));\nfinal_answer(r.map((x) => x.status === "fulfilled" ? x.value.cents : x.reason.code))',
        ),
      }),
    );
    const { task_id } = await fx.runtime.submit({ instruction: 'Price three things.', tenant: 'acme' });
    const view = await fx.runtime.run(task_id);
    expect(view.status, JSON.stringify(view.error)).toBe('succeeded');
    expect((view.result?.output as unknown[])[2]).toBe('TOOL_RATE_LIMITED');
    expect(fx.calls).toHaveLength(2);
    expect(systemPrompt(0)).toContain(
      "At most 1 call per hour (bursts of 2) and 100 calls per day (UTC) over all of this tenant's tasks; past that a call fails with code TOOL_RATE_LIMITED or TOOL_QUOTA_EXCEEDED and details.retry_after_seconds (when to try again).",
    );

    fx.model.push(reply({ content: js('final_answer(1)') }));
    const other = await fx.runtime.run(
      (await fx.runtime.submit({ instruction: 'One.', tenant: 'globex' })).task_id,
    );
    expect(other.status).toBe('succeeded');
    expect(systemPrompt(1)).toContain('get_price');
    expect(systemPrompt(1)).not.toContain('TOOL_RATE_LIMITED');
  });
});
