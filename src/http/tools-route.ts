import type { FastifyInstance } from 'fastify';
import type { ToolDefinition } from '../spec/index.ts';

/** A tool as GET /api/v1/tools lists it (no executor, no approval rules: who may decide is the runtime's). */
export interface ToolItem {
  readonly name: string;
  readonly namespace: string;
  readonly description: string;
  readonly effect: ToolDefinition['effect'];
  readonly approval: 'never' | 'always' | 'by_arguments';
  readonly input_schema: ToolDefinition['inputSchema'];
  /** Its cost against a task's `max_cost` (ADR 0044): a number, or `by_arguments`; absent: 1. */
  readonly cost?: number | 'by_arguments';
  /** Its own budget in every task (a task's may only tighten it); absent when it declares none. */
  readonly budget?: { readonly max_calls?: number; readonly max_wall_seconds?: number };
}

function toolItem(tool: ToolDefinition): ToolItem {
  const policy = tool.requiresApproval;
  return {
    name: `${tool.namespace}.${tool.name}`,
    namespace: tool.namespace,
    description: tool.description,
    effect: tool.effect,
    approval: policy === true ? 'always' : policy === false ? 'never' : 'by_arguments',
    input_schema: tool.inputSchema,
    ...(tool.cost === undefined ? {} : { cost: typeof tool.cost === 'number' ? tool.cost : 'by_arguments' }),
    ...(tool.budget === undefined
      ? {}
      : {
          budget: {
            ...(tool.budget.maxCalls === undefined ? {} : { max_calls: tool.budget.maxCalls }),
            ...(tool.budget.maxWallSeconds === undefined
              ? {}
              : { max_wall_seconds: tool.budget.maxWallSeconds }),
          },
        }),
  };
}

/** GET /api/v1/tools: what programs here may call, for whoever writes them (the console's Submit page). */
export function registerToolsRoute(app: FastifyInstance, tools: () => readonly ToolDefinition[]): void {
  // The same for every caller; built again only when the list changed (an MCP server's, ADR 0047).
  let listed: readonly ToolDefinition[] | null = null;
  let body: { tools: ReturnType<typeof toolItem>[] } = { tools: [] };
  app.get('/api/v1/tools', () => {
    const now = tools();
    if (now !== listed) {
      listed = now;
      body = { tools: now.map(toolItem) };
    }
    return body;
  });
}
