import type { ToolDefinition, ToolLimitsOfCall, ToolQuota, ToolRateLimit } from '../spec/index.ts';

/**
 * What the prompt says of a tool's limits for the task's tenant (ADR 0045), so a model's program can expect the
 * refusal and wait or degrade: one line, added to the tool's description (the declarations, the Python stubs and
 * the function specs all show it).
 */
const calls = (n: number): string => `${n} ${n === 1 ? 'call' : 'calls'}`;

function limitWords(rules: { readonly rate?: ToolRateLimit; readonly quota?: ToolQuota }): string[] {
  const { rate, quota } = rules;
  return [
    ...(rate
      ? [`${calls(rate.rate)} per ${rate.per}${rate.burst === undefined ? '' : ` (bursts of ${rate.burst})`}`]
      : []),
    ...(quota ? [`${calls(quota.max)} per ${quota.period} (UTC)`] : []),
  ];
}

export function tenantLimitLine(rules: ToolLimitsOfCall): string {
  const all = rules.allTools ?? {};
  const own = limitWords(rules);
  const shared = limitWords(all);
  const codes = [
    ...(rules.rate || all.rate ? ['TOOL_RATE_LIMITED'] : []),
    ...(rules.quota || all.quota ? ['TOOL_QUOTA_EXCEEDED'] : []),
  ];
  const parts = [
    ...(own.length > 0 ? [`At most ${own.join(' and ')} over all of this tenant's tasks`] : []),
    ...(shared.length > 0
      ? [
          `${own.length > 0 ? 'and' : 'At most'} ${shared.join(' and ')} of all of this tenant's tools together`,
        ]
      : []),
  ];
  return (
    `${parts.join(' ')}; past that a call fails with code ` +
    `${codes.join(' or ')} and details.retry_after_seconds (when to try again).`
  );
}

/** The tool with its tenant's limits said in its description; the tool itself when none applies. */
export function withTenantLimits(
  tool: ToolDefinition,
  limitsOf: ((tool: string) => ToolLimitsOfCall | null) | undefined,
): ToolDefinition {
  const rules = limitsOf?.(`${tool.namespace}.${tool.name}`) ?? null;
  if (rules === null) return tool;
  const line = tenantLimitLine(rules);
  return { ...tool, description: tool.description === '' ? line : `${tool.description}\n${line}` };
}
