import { CodecallError } from '../errors/index.ts';
import type { ToolEffect } from '../spec/index.ts';
import { RESERVED_TOOL_NAMES } from '../tools/index.ts';

/** The annotations of an MCP tool that decide its effect (hints: the operator's override wins). */
export interface McpAnnotations {
  readonly readOnlyHint?: boolean;
  readonly idempotentHint?: boolean;
  readonly destructiveHint?: boolean;
}

/**
 * A tool's effect from its annotations: `readOnlyHint` is read, else `idempotentHint` idempotent, else unsafe (a
 * destructive tool, and one that says nothing: the only safe assumption).
 */
export function effectFromAnnotations(annotations: McpAnnotations | undefined): ToolEffect {
  if (annotations?.readOnlyHint === true) return 'read';
  if (annotations?.idempotentHint === true) return 'idempotent';
  return 'unsafe';
}

const NOT_IDENTIFIER_PART = /[^A-Za-z0-9_]/g;

/**
 * The name programs call an MCP tool by, under `tools.<server>.`: its own when it is an identifier in both
 * JavaScript and Python, else each other character as `_` (`create-issue` -> `create_issue`, `a.b` -> `a_b`), with
 * `_` before a leading digit. Names the namespace object keeps for itself, or a Python protocol name
 * (`__x`), take a trailing `_`.
 */
export function mcpMemberName(toolName: string): string {
  let name = toolName.replace(NOT_IDENTIFIER_PART, '_');
  if (name === '' || /^[0-9]/.test(name)) name = `_${name}`;
  if (RESERVED_TOOL_NAMES.has(name) || name.startsWith('__')) name = `${name}_`;
  return name;
}

/**
 * Member names for a server's tools, in listing order: each its `mcpMemberName`, and a name taken already (two
 * MCP names that differ only in characters that became `_`, or a `_async` twin of Python's) the first free
 * `<name>_2`, `<name>_3`, ...
 */
export function memberNames(toolNames: readonly string[]): string[] {
  const taken = new Set<string>();
  return toolNames.map((toolName) => {
    const base = mcpMemberName(toolName);
    let name = base;
    for (let n = 2; taken.has(name) || taken.has(`${name}_async`); n++) name = `${base}_${n}`;
    taken.add(name);
    // Python gives each tool an awaitable `<name>_async` twin: no other tool may take that name.
    taken.add(`${name}_async`);
    return name;
  });
}

/** A content block of a tool result as MCP sends it (the kinds the program sees are below). */
type ContentBlock = Record<string, unknown> & { type?: unknown };

/**
 * What the program sees of an MCP tool's result (ADR 0047):
 * - `structuredContent` when the server sent one (a tool with an output schema must);
 * - else its content: none is `null`, one text block is its string, one other block is that block as an object
 *   (`{ type: 'image', mimeType, data }` with base64 data, `audio` likewise, `resource_link`, `resource`);
 *   several blocks are an array of block objects (text as `{ type: 'text', text }`).
 * A `toolResult` (protocol 2024-10-07) is taken as it is. Text is never parsed as JSON: a program that knows it holds JSON parses it.
 * An `isError` result throws MCP_TOOL_ERROR with the server's text as its message.
 */
export function mcpResultValue(
  result: { content?: unknown; structuredContent?: unknown; isError?: unknown; toolResult?: unknown },
  where: { server: string; tool: string },
): unknown {
  // A server of protocol 2024-10-07 answers `{ toolResult }`.
  if (!('content' in result) && 'toolResult' in result) return result.toolResult ?? null;
  const blocks = Array.isArray(result.content) ? (result.content as ContentBlock[]).map(cleanBlock) : [];
  if (result.isError === true) {
    const text = blocks
      .filter((b) => b.type === 'text' && typeof b.text === 'string')
      .map((b) => b.text as string)
      .join('\n')
      .trim();
    throw new CodecallError(
      'MCP_TOOL_ERROR',
      text === '' ? `${where.server}.${where.tool} failed (the MCP server gave no message)` : text,
      { details: { server: where.server, tool: where.tool } },
    );
  }
  if (result.structuredContent !== undefined && result.structuredContent !== null) {
    return result.structuredContent;
  }
  if (blocks.length === 0) return null;
  if (blocks.length === 1) {
    const only = blocks[0] as ContentBlock;
    return only.type === 'text' && typeof only.text === 'string' ? only.text : only;
  }
  return blocks;
}

/** A block without what only MCP clients read (`_meta`, `annotations` for the audience). */
function cleanBlock(block: ContentBlock): ContentBlock {
  if (typeof block !== 'object' || block === null) return { type: 'unknown' };
  const { _meta: _m, annotations: _a, ...rest } = block;
  return rest;
}
