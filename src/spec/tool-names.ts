/** A JavaScript identifier: a tool namespace (it is a global in the guest). */
export const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/**
 * A tool's own name: an identifier, or one with `-` after its first character as other systems name tools
 * (`lookup-user`, called as `tools['lookup-user']`). No `.`: that groups an MCP server's tools (ADR 0047).
 */
export const TOOL_NAME = /^[A-Za-z_$][A-Za-z0-9_$-]{0,127}$/;

/**
 * A tool as programs call it and as budgets, limits and allow-lists name it: `namespace.name`, or
 * `namespace.server.member` for an MCP server's tool.
 */
export const QUALIFIED_TOOL_NAME =
  /^[A-Za-z_$][A-Za-z0-9_$]*\.[A-Za-z_$][A-Za-z0-9_$-]{0,127}(?:\.[A-Za-z_$][A-Za-z0-9_$-]{0,127})?$/;
