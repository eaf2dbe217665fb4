/** A tool as a program reaches it: `namespace.name`. */
export interface ToolName {
  readonly namespace: string;
  readonly name: string;
}

const MISSING: Readonly<Record<string, RegExp>> = {
  NameError: /^name '([^']+)' is not defined/,
  ReferenceError: /^'?([\w$]+)'? is not defined/,
};

/**
 * The message of a program's NameError or ReferenceError, told where the name is when it is a tool's: programs
 * written for smolagents (and some for other systems) call tools by their bare names.
 */
export function toolNameHint(name: string, message: string, tools: readonly ToolName[]): string {
  const missing = MISSING[name]?.exec(message)?.[1];
  const tool = missing === undefined ? undefined : tools.find((t) => t.name === missing);
  return tool ? `${message} (it is a tool: call it as ${tool.namespace}.${tool.name}(...))` : message;
}
