import type { LimitCeilings } from '../durable/index.ts';
import { CodecallError } from '../errors/index.ts';
import { checkTaskBudgets, taskBudgetsFromWire } from '../spec/index.ts';
import type { BudgetCeilings } from '../spec/index.ts';
import type { ServiceConfig } from './config.ts';

/**
 * The runtime's ceilings on tool budgets from the config (ADR 0044): the keys that are set, `maxToolBudgets` in
 * the runtime's form (the config has the wire's, as a task's `budgets.tools`, checked by the schema).
 */
export function serviceBudgetCeilings(
  config: Pick<ServiceConfig, 'maxTaskToolCalls' | 'maxTaskCost' | 'maxToolBudgets' | 'tenantBudgetCeilings'>,
): Pick<LimitCeilings, 'maxTaskToolCalls' | 'maxTaskCost' | 'maxToolBudgets' | 'tenantBudgetCeilings'> {
  const tools = taskBudgetsFromWire({ tools: config.maxToolBudgets }).tools ?? {};
  const tenants = tenantCeilings(config.tenantBudgetCeilings);
  return {
    ...(tenants === undefined ? {} : { tenantBudgetCeilings: tenants }),
    ...(config.maxTaskToolCalls === null ? {} : { maxTaskToolCalls: config.maxTaskToolCalls }),
    ...(config.maxTaskCost === null ? {} : { maxTaskCost: config.maxTaskCost }),
    ...(Object.keys(tools).length === 0 ? {} : { maxToolBudgets: tools }),
  };
}

/** Each tenant's entry checked as a task's budgets are: INVALID_CONFIG naming the bad field. */
function tenantCeilings(
  config: Readonly<Record<string, unknown>>,
): Record<string, BudgetCeilings> | undefined {
  const entries = Object.entries(config).map(([tenant, value]): [string, BudgetCeilings] => {
    const field = `tenantBudgetCeilings[${JSON.stringify(tenant)}]`;
    try {
      return [tenant, checkTaskBudgets(value, field) ?? {}];
    } catch (e) {
      throw new CodecallError('INVALID_CONFIG', `config ${(e as Error).message}`, { details: { field } });
    }
  });
  // fromEntries defines own properties: a tenant named `__proto__` is a tenant, not a prototype.
  return entries.length > 0 ? Object.fromEntries(entries) : undefined;
}
