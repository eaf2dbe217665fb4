import type { ToolDefinition, ToolSpec } from '../spec/index.ts';
import { DEFAULT_TOOL_NAMESPACE } from '../tools/index.ts';
import { strictSchema } from './strict-schema.ts';
import { budgetLines } from './tool-declarations.ts';

export { strictSchema } from './strict-schema.ts';
export { fromStrictArguments } from './strict-arguments.ts';

/** A tool as offered to the model in function-calling mode, with the definition its calls run. */
export interface FunctionTool {
  /**
   * What the model sees. When `spec.strict` is set, `spec.parameters` is `strictSchema(tool.inputSchema)`: pass
   * the call's arguments through `fromStrictArguments(tool.inputSchema, args)` before validating and executing.
   */
  readonly spec: ToolSpec;
  readonly tool: ToolDefinition;
}

export interface FunctionToolsOptions {
  /** Offer each tool whose input schema has a strict variant with `strict: true` (default false). */
  readonly strict?: boolean;
}

/** OpenAI's rule for function names, followed by the other providers. */
const MAX_FUNCTION_NAME_LENGTH = 64;

/**
 * Function names for the model: `name` for namespace `tools`, else `namespace__name`; only [a-zA-Z0-9_-], max
 * 64 chars (OpenAI's rule); collisions get a numeric suffix; deterministic.
 *
 * Characters outside the set become `_`, then the name is cut to 64 characters. When several tools end up with
 * the same name, the one whose name needed no change keeps it, then the others in the order of their qualified
 * names (`namespace.name`), each of the rest taking the first free `<name>_2`, `<name>_3`, ... (cut so the
 * suffix fits). Names depend on the set of tools, not on their order. The result keeps the input order.
 */
export function functionTools(
  tools: readonly ToolDefinition[],
  options: FunctionToolsOptions = {},
): FunctionTool[] {
  const names = functionNames(tools);
  return tools.map((tool, index) => {
    const strict = options.strict === true ? strictSchema(tool.inputSchema) : null;
    const spec: ToolSpec = {
      name: names[index] ?? '',
      // Its budget in the task, as code mode's declarations say it (ADR 0044).
      description: [tool.description, ...budgetLines(tool.budget)].filter((t) => t !== '').join(' '),
      parameters: strict ?? tool.inputSchema,
      ...(strict === null ? {} : { strict: true }),
    };
    return { spec, tool };
  });
}

function qualifiedName(tool: ToolDefinition): string {
  return tool.namespace === DEFAULT_TOOL_NAMESPACE ? tool.name : `${tool.namespace}__${tool.name}`;
}

function baseFunctionName(tool: ToolDefinition): string {
  const cleaned = qualifiedName(tool).replace(/[^A-Za-z0-9_-]/g, '_');
  return (cleaned === '' ? 'tool' : cleaned).slice(0, MAX_FUNCTION_NAME_LENGTH);
}

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function functionNames(tools: readonly ToolDefinition[]): string[] {
  const bases = tools.map(baseFunctionName);
  const groups = new Map<string, number[]>();
  bases.forEach((base, index) => {
    const group = groups.get(base);
    if (group) group.push(index);
    else groups.set(base, [index]);
  });
  const names: string[] = new Array<string>(tools.length);
  const taken = new Set(bases);
  for (const base of [...groups.keys()].sort(compareStrings)) {
    const members = (groups.get(base) ?? []).slice();
    const key = (index: number): string => {
      const tool = tools[index] as ToolDefinition;
      return `${tool.namespace}.${tool.name}`;
    };
    members.sort((a, b) => {
      const exactA = qualifiedName(tools[a] as ToolDefinition) === base ? 0 : 1;
      const exactB = qualifiedName(tools[b] as ToolDefinition) === base ? 0 : 1;
      return exactA - exactB || compareStrings(key(a), key(b)) || a - b;
    });
    members.forEach((index, rank) => {
      if (rank === 0) {
        names[index] = base;
        return;
      }
      for (let n = 2; ; n++) {
        const suffix = `_${n}`;
        const candidate = base.slice(0, MAX_FUNCTION_NAME_LENGTH - suffix.length) + suffix;
        if (!taken.has(candidate)) {
          taken.add(candidate);
          names[index] = candidate;
          return;
        }
      }
    });
  }
  return names;
}
