import type { JsonSchema, ToolBudget, ToolDefinition } from '../spec/index.ts';
import { isRecord } from '../spec/is-record.ts';
import { IDENTIFIER } from '../spec/tool-names.ts';
import { resolvePointer } from './json-pointer.ts';

const STEP = '  ';
/** Object types longer than this, or with documented properties, take one line per property. */
const MAX_INLINE = 80;

/** A rendered type and how it binds: a union needs parentheses inside an array or an intersection. */
interface Rendered {
  readonly text: string;
  readonly op: 'atom' | 'union' | 'and';
}

const atom = (text: string): Rendered => ({ text, op: 'atom' });
const UNKNOWN = atom('unknown');
const NEVER = atom('never');

/** TypeScript declarations of these tools for the code-mode prompt: one `declare const <namespace>: { ... }` per namespace. */
export function toolDeclarations(tools: readonly ToolDefinition[]): string {
  const namespaces = new Map<string, ToolDefinition[]>();
  for (const tool of tools) {
    const list = namespaces.get(tool.namespace) ?? [];
    list.push(tool);
    namespaces.set(tool.namespace, list);
  }
  return [...namespaces]
    .map(([namespace, list]) => `declare const ${namespace}: {\n${members(list)}\n};`)
    .join('\n\n');
}

/**
 * A namespace's members: its tools, then each group of tools named `<group>.<tool>` (an MCP server's) as an object
 * member `<group>: { ... }`, in order of first appearance.
 */
function members(list: readonly ToolDefinition[]): string {
  const plain: string[] = [];
  const groups = new Map<string, string[]>();
  for (const tool of list) {
    const dot = tool.name.indexOf('.');
    if (dot <= 0) {
      plain.push(toolMember(tool, tool.name, STEP));
      continue;
    }
    const group = tool.name.slice(0, dot);
    const rendered = groups.get(group) ?? [];
    rendered.push(toolMember(tool, tool.name.slice(dot + 1), STEP + STEP));
    groups.set(group, rendered);
  }
  const grouped = [...groups].map(
    ([group, rendered]) => `${STEP}${propertyKey(group)}: {\n${rendered.join('\n\n')}\n${STEP}};`,
  );
  return [...plain, ...grouped].join('\n\n');
}

/**
 * A tool's budget in the task as the prompt says it (ADR 0044): the caller passes the tool with its budget in the
 * task (`tighterBudget` of the declared one and the task's).
 */
export function budgetLines(budget: ToolBudget | undefined): string[] {
  if (budget === undefined) return [];
  const limits = [
    ...(budget.maxCalls === undefined
      ? []
      : [`${budget.maxCalls} ${budget.maxCalls === 1 ? 'call' : 'calls'}`]),
    ...(budget.maxWallSeconds === undefined ? [] : [`${budget.maxWallSeconds} s of calls`]),
  ];
  return limits.length === 0
    ? []
    : [
        `At most ${limits.join(' and ')} in this task; past that a call fails with code TOOL_BUDGET_EXCEEDED.`,
      ];
}

/** The TypeScript type of a JSON Schema (exported for tests). */
export function schemaToType(schema: JsonSchema, indent = ''): string {
  return new Renderer(schema).type(schema, indent).text;
}

function toolMember(tool: ToolDefinition, member: string, indent: string): string {
  const input = new Renderer(tool.inputSchema);
  const args = input.deref(tool.inputSchema);
  const properties = isRecord(args.properties) ? Object.entries(args.properties) : [];
  const params = properties.flatMap(([name, schema]) => {
    const [first = '', ...rest] = input.doc(schema);
    const key = IDENTIFIER.test(name) ? `.${name}` : `[${JSON.stringify(name)}]`;
    return first === '' ? [] : [`@param args${key} ${first}`, ...rest];
  });
  const output = tool.outputSchema === undefined ? undefined : new Renderer(tool.outputSchema);
  const returns = output === undefined ? '' : output.doc(tool.outputSchema).join(' ');
  const approval = tool.requiresApproval === true || typeof tool.requiresApproval === 'function';
  const doc = [
    ...docLines(tool.description),
    ...params,
    ...(returns === '' ? [] : [`@returns ${returns}`]),
    ...(approval ? ['Requires human approval.'] : []),
    ...budgetLines(tool.budget),
  ];
  // The top-level properties are documented by the @param lines, not again inside the type.
  const argsType = input.type(tool.inputSchema, indent, false).text;
  const optional = isObjectOnly(args) && requiredNames(args).size === 0 ? '?' : '';
  const result = output === undefined ? 'unknown' : output.type(tool.outputSchema, indent).text;
  const signature = `${propertyKey(member)}(args${optional}: ${argsType}): Promise<${result}>;`;
  return [...jsdoc(doc, indent), indent + signature].join('\n');
}

/** Renders the schemas of one document: `$ref`s resolve against its root; a reference met again inside itself is `unknown`. */
class Renderer {
  private readonly expanding: string[] = ['#'];

  constructor(private readonly root: unknown) {}

  type(schema: unknown, indent: string, docs = true): Rendered {
    if (schema === false) return NEVER;
    if (!isRecord(schema)) return UNKNOWN;
    const parts: Rendered[] = [];
    if (typeof schema.$ref === 'string') parts.push(this.ref(schema.$ref, indent, docs));
    parts.push(this.own(schema, indent, docs));
    if (Array.isArray(schema.allOf)) parts.push(...schema.allOf.map((s) => this.type(s, indent)));
    for (const key of ['anyOf', 'oneOf'] as const) {
      const members = schema[key];
      if (Array.isArray(members)) parts.push(union(members.map((s) => this.type(s, indent))));
    }
    const result = intersection(parts);
    return schema.nullable === true ? union([result, atom('null')]) : result;
  }

  /** The schema a chain of `$ref`s leads to (for documentation; the schema itself when it is not a reference). */
  deref(schema: unknown): Record<string, unknown> {
    const seen = new Set<string>();
    let current = schema;
    while (isRecord(current) && typeof current.$ref === 'string' && !seen.has(current.$ref)) {
      seen.add(current.$ref);
      const target = resolvePointer(this.root, current.$ref);
      if (!isRecord(target)) break;
      current = { ...target, ...current, $ref: target.$ref };
    }
    return isRecord(current) ? current : {};
  }

  /** Documentation lines of a property: its description, then its format and default. */
  doc(schema: unknown): string[] {
    const s = this.deref(schema);
    const lines = typeof s.description === 'string' ? docLines(s.description) : [];
    const notes: string[] = [];
    if (typeof s.format === 'string') notes.push(`(format: ${s.format})`);
    if (s.default !== undefined) notes.push(`(default: ${JSON.stringify(s.default)})`);
    if (notes.length === 0) return lines;
    const last = lines.pop();
    return [...lines, escapeComment([last, ...notes].filter(Boolean).join(' '))];
  }

  private ref(ref: string, indent: string, docs: boolean): Rendered {
    const target = resolvePointer(this.root, ref);
    if (target === undefined || this.expanding.includes(ref)) return UNKNOWN;
    this.expanding.push(ref);
    try {
      return this.type(target, indent, docs);
    } finally {
      this.expanding.pop();
    }
  }

  /** The type given by the schema's own keywords (not its `$ref` or combinators). */
  private own(s: Record<string, unknown>, indent: string, docs: boolean): Rendered {
    if (s.const !== undefined) return atom(JSON.stringify(s.const));
    if (Array.isArray(s.enum)) return union(s.enum.map((value) => atom(JSON.stringify(value) ?? 'null')));
    if (Array.isArray(s.type)) return union(s.type.map((t) => this.ofType(s, t, indent, docs)));
    if (typeof s.type === 'string') return this.ofType(s, s.type, indent, docs);
    if (['properties', 'additionalProperties', 'patternProperties'].some((k) => k in s)) {
      return this.object(s, indent, docs);
    }
    if ('items' in s || 'prefixItems' in s) return this.array(s, indent);
    return UNKNOWN;
  }

  private ofType(s: Record<string, unknown>, type: unknown, indent: string, docs: boolean): Rendered {
    switch (type) {
      case 'string':
      case 'number':
      case 'boolean':
      case 'null':
        return atom(type);
      case 'integer':
        return atom('number');
      case 'object':
        return this.object(s, indent, docs);
      case 'array':
        return this.array(s, indent);
      default:
        return UNKNOWN;
    }
  }

  private object(s: Record<string, unknown>, indent: string, docs: boolean): Rendered {
    const inner = indent + STEP;
    const required = requiredNames(s);
    const properties = isRecord(s.properties) ? Object.entries(s.properties) : [];
    const members = properties.map(([name, schema]) => ({
      doc: docs ? this.doc(schema) : [],
      line: `${propertyKey(name)}${required.has(name) ? '' : '?'}: ${this.type(schema, inner).text}`,
    }));
    const indexSchemas = isRecord(s.patternProperties) ? Object.values(s.patternProperties) : [];
    const extra = s.additionalProperties;
    if (isRecord(extra) || extra === true) indexSchemas.push(extra);
    if (indexSchemas.length === 0 && extra !== false && properties.length === 0) {
      // A bare `type: object` beside combinators says nothing they do not.
      if (['$ref', 'allOf', 'anyOf', 'oneOf'].some((k) => k in s)) return UNKNOWN;
      indexSchemas.push(true);
    }
    if (indexSchemas.length === 0) return atom(block(members, indent));
    const index = union(indexSchemas.map((schema) => this.type(schema, inner)));
    const signature = { doc: [], line: `[key: string]: ${index.text}` };
    // Properties must fit an index signature; beside a precise one they go in their own object type.
    if (members.length === 0 || index === UNKNOWN) return atom(block([...members, signature], indent));
    return intersection([atom(block(members, indent)), atom(block([signature], indent))]);
  }

  private array(s: Record<string, unknown>, indent: string): Rendered {
    const tuple = Array.isArray(s.prefixItems) ? s.prefixItems : Array.isArray(s.items) ? s.items : undefined;
    if (tuple === undefined) return arrayOf(this.type(s.items ?? true, indent));
    const rest = Array.isArray(s.prefixItems) ? s.items : s.additionalItems;
    const elements = tuple.map((item) => this.type(item, indent).text);
    if (isRecord(rest) || rest === true) elements.push(`...${arrayOf(this.type(rest, indent)).text}`);
    return atom(`[${elements.join(', ')}]`);
  }
}

function union(members: readonly Rendered[]): Rendered {
  if (members.some((m) => m.text === 'unknown')) return UNKNOWN;
  const texts = [...new Set(members.filter((m) => m.text !== 'never').map((m) => m.text))];
  if (texts.length === 0) return NEVER;
  if (texts.length === 1) return members.find((m) => m.text === texts[0]) ?? UNKNOWN;
  return { text: texts.join(' | '), op: 'union' };
}

function intersection(parts: readonly Rendered[]): Rendered {
  const known = parts.filter(
    (p, i) => p.text !== 'unknown' && parts.findIndex((q) => q.text === p.text) === i,
  );
  if (known.some((p) => p.text === 'never')) return NEVER;
  if (known.length <= 1) return known[0] ?? UNKNOWN;
  return { text: known.map((p) => (p.op === 'union' ? `(${p.text})` : p.text)).join(' & '), op: 'and' };
}

function arrayOf(item: Rendered): Rendered {
  return atom(item.op === 'atom' ? `${item.text}[]` : `(${item.text})[]`);
}

function block(members: readonly { doc: readonly string[]; line: string }[], indent: string): string {
  if (members.length === 0) return '{}';
  const inline = `{ ${members.map((m) => m.line).join('; ')} }`;
  if (members.every((m) => m.doc.length === 0) && !inline.includes('\n') && inline.length <= MAX_INLINE) {
    return inline;
  }
  const inner = indent + STEP;
  const lines = members.flatMap((m) => [...jsdoc(m.doc, inner), `${inner}${m.line};`]);
  return ['{', ...lines, `${indent}}`].join('\n');
}

function jsdoc(lines: readonly string[], indent: string): string[] {
  if (lines.length === 0) return [];
  if (lines.length === 1) return [`${indent}/** ${lines[0]} */`];
  return [`${indent}/**`, ...lines.map((line) => `${indent} * ${line}`.trimEnd()), `${indent} */`];
}

/** A description as comment lines: trimmed, blank edges dropped, `*\/` unable to close the comment. */
function docLines(text: string): string[] {
  const trimmed = text.trim();
  return trimmed === '' ? [] : trimmed.split(/\r?\n/).map((line) => escapeComment(line.trimEnd()));
}

function escapeComment(text: string): string {
  return text.replaceAll('*/', '*\\/');
}

function propertyKey(name: string): string {
  return IDENTIFIER.test(name) ? name : JSON.stringify(name);
}

function requiredNames(s: Record<string, unknown>): Set<string> {
  const required = Array.isArray(s.required) ? s.required : [];
  return new Set(required.filter((name): name is string => typeof name === 'string'));
}

/** An object schema with nothing that could make its arguments required besides `required`. */
function isObjectOnly(s: Record<string, unknown>): boolean {
  const objectish = s.type === 'object' || (s.type === undefined && isRecord(s.properties));
  return objectish && ['allOf', 'anyOf', 'oneOf', '$ref', 'const', 'enum'].every((k) => s[k] === undefined);
}
