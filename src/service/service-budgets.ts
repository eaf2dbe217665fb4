import type { LimitCeilings } from '../durable/index.ts';
import { taskBudgetsFromWire } from '../spec/index.ts';
import type { ServiceConfig } from './config.ts';

/**
 * The runtime's ceilings on tool budgets from the config (ADR 0044): the keys that are set, `maxToolBudgets` in
 * the runtime's form (the config has the wire's, as a task's `budgets.tools`, checked by the schema).
 */
export function serviceBudgetCeilings(
  config: Pick<ServiceConfig, 'maxTaskToolCalls' | 'maxTaskCost' | 'maxToolBudgets'>,
): Pick<LimitCeilings, 'maxTaskToolCalls' | 'maxTaskCost' | 'maxToolBudgets'> {
  const tools = taskBudgetsFromWire({ tools: config.maxToolBudgets }).tools ?? {};
  return {
    ...(config.maxTaskToolCalls === null ? {} : { maxTaskToolCalls: config.maxTaskToolCalls }),
    ...(config.maxTaskCost === null ? {} : { maxTaskCost: config.maxTaskCost }),
    ...(Object.keys(tools).length === 0 ? {} : { maxToolBudgets: tools }),
  };
}
