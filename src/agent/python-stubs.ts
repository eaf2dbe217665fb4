import type { JsonSchema, ToolDefinition } from '../spec/index.ts';
import { isRecord } from '../spec/is-record.ts';
import { resolvePointer } from './json-pointer.ts';
import { budgetLines } from './tool-declarations.ts';

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
const MAX_DEPTH = 6;

/** Follows a local `$ref` (`#/$defs/x`, `#/definitions/x`); anything else stays as it is. */
function deref(
  root: JsonSchema,
  schema: unknown,
  seen: ReadonlySet<string>,
): { s: unknown; seen: ReadonlySet<string> } {
  if (!isRecord(schema) || typeof schema.$ref !== 'string') return { s: schema, seen };
  const ref = schema.$ref;
  if (seen.has(ref)) return { s: {}, seen };
  return { s: resolvePointer(root, ref) ?? {}, seen: new Set([...seen, ref]) };
}

/**
 * The Python type of a JSON Schema as the prompt shows it: `str`, `int`, `list[float]`, `Literal["a", "b"]`,
 * `X | None`, and objects as `{"key": type, "opt"?: type}` (what the program gets is a dict of that shape).
 */
export function pythonType(
  root: JsonSchema,
  schema: unknown,
  depth = 0,
  seen: ReadonlySet<string> = new Set(),
): string {
  if (depth > MAX_DEPTH) return 'Any';
  const r = deref(root, schema, seen);
  const s = r.s;
  if (!isRecord(s)) return 'Any';
  const next = (x: unknown) => pythonType(root, x, depth + 1, r.seen);
  if (Array.isArray(s.enum)) return `Literal[${s.enum.map((v) => JSON.stringify(v)).join(', ')}]`;
  if ('const' in s) return `Literal[${JSON.stringify(s.const)}]`;
  for (const key of ['anyOf', 'oneOf'] as const) {
    const options = s[key];
    if (Array.isArray(options)) return [...new Set(options.map(next))].join(' | ');
  }
  const types = Array.isArray(s.type) ? s.type : [s.type];
  const rendered = types.map((t) => {
    switch (t) {
      case 'string':
        return 'str';
      case 'integer':
        return 'int';
      case 'number':
        return 'float';
      case 'boolean':
        return 'bool';
      case 'null':
        return 'None';
      case 'array':
        return `list[${s.items === undefined ? 'Any' : next(s.items)}]`;
      case 'object':
      case undefined: {
        if (!isRecord(s.properties)) return t === undefined ? 'Any' : 'dict';
        const required = new Set(Array.isArray(s.required) ? s.required : []);
        const fields = Object.entries(s.properties).map(
          ([k, v]) => `${JSON.stringify(k)}${required.has(k) ? '' : '?'}: ${next(v)}`,
        );
        return `{${fields.join(', ')}}`;
      }
      default:
        return 'Any';
    }
  });
  return [...new Set(rendered)].join(' | ');
}

function docstring(lines: readonly string[], indent: string): string {
  const text = lines.map((l) => l.replace(/\\/g, '\\\\').replace(/"""/g, '\\"\\"\\"'));
  if (text.length === 1) return `${indent}"""${text[0]}"""`;
  return [
    `${indent}"""${text[0] ?? ''}`,
    ...text.slice(1).map((l) => (l ? `${indent}${l}` : '')),
    `${indent}"""`,
  ].join('\n');
}

/** How Python spells a tool's name: `lookup-user` is `lookup_user` (the runtime makes the same alias). */
export function pythonName(name: string): string {
  return name.replace(/[^A-Za-z0-9_]/g, '_');
}

function stub(tool: ToolDefinition, name = tool.name): string {
  const root = tool.inputSchema;
  const args = deref(root, root, new Set()).s;
  const props = isRecord(args) && isRecord(args.properties) ? Object.entries(args.properties) : [];
  const required = new Set(isRecord(args) && Array.isArray(args.required) ? args.required : []);
  // Required first: Python wants parameters with defaults last (all are keyword-only anyway).
  const ordered = [...props.filter(([k]) => required.has(k)), ...props.filter(([k]) => !required.has(k))];
  const params = ordered
    .filter(([k]) => IDENTIFIER.test(k))
    .map(([k, v]) => {
      const t = pythonType(root, v);
      const simple = /^[\w[\], |]+$/.test(t) && !t.includes('{') ? t : 'dict';
      return required.has(k) ? `${k}: ${simple}` : `${k}: ${simple} | None = None`;
    });
  const output = tool.outputSchema ? pythonType(tool.outputSchema, tool.outputSchema) : 'Any';
  const returns = /^[\w[\], |]+$/.test(output) && !output.includes('{') ? output : 'dict';
  const doc = [tool.description.trim() || name];
  if (pythonName(name) !== name) doc.push('', `The tool's name is ${JSON.stringify(name)}.`);
  const documented = ordered.filter(
    ([, v]) => isRecord(v) && (typeof v.description === 'string' || pythonType(root, v).includes('{')),
  );
  if (documented.length > 0) doc.push('', 'Args:');
  for (const [k, v] of documented) {
    const description = isRecord(v) && typeof v.description === 'string' ? ` ${v.description}` : '';
    doc.push(`    ${k} (${pythonType(root, v)}):${description}`);
  }
  if (tool.outputSchema) doc.push('', `Returns: ${output}`);
  if (tool.requiresApproval !== false) doc.push('', 'Requires human approval.');
  const budget = budgetLines(tool.budget);
  if (budget.length > 0) doc.push('', ...budget);
  const signature = params.length > 0 ? `*, ${params.join(', ')}` : '';
  return [
    '    @staticmethod',
    `    def ${pythonName(name)}(${signature}) -> ${returns}:`,
    docstring(doc, '        '),
  ].join('\n');
}

/**
 * A namespace's members: its tools, then each group of tools named `<group>.<tool>` (an MCP server's) as a nested
 * class, in order of first appearance.
 */
function members(list: readonly ToolDefinition[]): string[] {
  const plain: string[] = [];
  const groups = new Map<string, string[]>();
  for (const tool of list) {
    const dot = tool.name.indexOf('.');
    if (dot <= 0) {
      plain.push(stub(tool));
      continue;
    }
    const group = tool.name.slice(0, dot);
    groups.set(group, [...(groups.get(group) ?? []), stub(tool, tool.name.slice(dot + 1))]);
  }
  const nested = [...groups].map(([group, stubs]) =>
    [
      `    class ${group}:`,
      ...stubs.flatMap((s, i) => (i === 0 ? [s] : ['', s])).map((s) => s.replace(/^(?=.)/gm, '    ')),
    ].join('\n'),
  );
  return [...plain, ...nested];
}

/**
 * Python stubs of these tools for the code-mode prompt: one class per namespace with a static method per tool
 * (keyword arguments named after the schema's properties). Each tool also has an awaitable `<name>_async`.
 */
export function pythonStubs(tools: readonly ToolDefinition[]): string {
  const namespaces = new Map<string, ToolDefinition[]>();
  for (const tool of tools) namespaces.set(tool.namespace, [...(namespaces.get(tool.namespace) ?? []), tool]);
  const classes = [...namespaces].map(([namespace, list]) =>
    [`class ${namespace}:`, ...members(list).flatMap((s, i) => (i === 0 ? [s] : ['', s]))].join('\n'),
  );
  return [
    'from typing import Any, Literal',
    '',
    ...classes.flatMap((c, i) => (i === 0 ? [c] : ['', c])),
  ].join('\n');
}
