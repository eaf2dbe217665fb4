import type { ToolDefinition, ToolLimitsOfCall } from '../spec/index.ts';

/**
 * What the prompt says of a tool's limits for the task's tenant (ADR 0045), so a model's program can expect the
 * refusal and wait or degrade: one line, added to the tool's description (the declarations, the Python stubs and
 * the function specs all show it).
 */
const calls = (n: number): string => `${n} ${n === 1 ? 'call' : 'calls'}`;

export function tenantLimitLine(rules: ToolLimitsOfCall): string {
  const { rate, quota } = rules;
  const limits = [
    ...(rate
      ? [`${calls(rate.rate)} per ${rate.per}${rate.burst === undefined ? '' : ` (bursts of ${rate.burst})`}`]
      : []),
    ...(quota ? [`${calls(quota.max)} per ${quota.period} (UTC)`] : []),
  ];
  const codes = [...(rate ? ['TOOL_RATE_LIMITED'] : []), ...(quota ? ['TOOL_QUOTA_EXCEEDED'] : [])];
  return (
    `At most ${limits.join(' and ')} over all of this tenant's tasks; past that a call fails with code ` +
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
