import { z } from 'zod';
import { CodecallError } from '../errors/index.ts';
import type {
  ApprovalPolicy,
  JsonSchema,
  ToolApproval,
  ToolContext,
  ToolDefinition,
  RevisedCallPolicy,
  ToolBudget,
  ToolEffect,
} from '../spec/index.ts';
import { checkToolBudget, checkToolCost, TOOL_EFFECTS } from '../spec/index.ts';
import { IDENTIFIER, TOOL_NAME } from '../spec/tool-names.ts';
import { checkToolApproval } from './tool-approval.ts';

export const DEFAULT_TOOL_NAMESPACE = 'tools';

/**
 * The brand a `defineTool` result carries: a registry-wide symbol, so a definition made by another copy of
 * codecall (a tools module's own node_modules) is recognised as one, where `instanceof` or a module-local
 * symbol would not be.
 */
export const TOOL_BRAND: unique symbol = Symbol.for('codecall.tool');

/** Whether a value is a `defineTool` result, by its brand, from whichever copy of codecall made it. */
export function isBrandedTool(value: unknown): value is ToolDefinition {
  return (
    typeof value === 'object' && value !== null && (value as { [TOOL_BRAND]?: unknown })[TOOL_BRAND] === true
  );
}

/** Tool names that would confuse property lookup on the namespace object (or make it look like a promise). */
export const RESERVED_TOOL_NAMES: ReadonlySet<string> = new Set([
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'valueOf',
  'hasOwnProperty',
  'then',
  'toJSON',
]);

/** Namespaces become guest globals: never a language or runtime global, nor a keyword. */
const RESERVED_NAMESPACES = new Set([
  ...RESERVED_TOOL_NAMES,
  'globalThis',
  'Object',
  'Function',
  'Array',
  'Number',
  'Boolean',
  'String',
  'Symbol',
  'BigInt',
  'Math',
  'JSON',
  'Date',
  'RegExp',
  'Reflect',
  'Proxy',
  'Promise',
  'Map',
  'Set',
  'WeakMap',
  'WeakSet',
  'WeakRef',
  'Error',
  'TypeError',
  'RangeError',
  'SyntaxError',
  'ReferenceError',
  'EvalError',
  'URIError',
  'AggregateError',
  'InternalError',
  'Iterator',
  'ArrayBuffer',
  'DataView',
  'Intl',
  'Atomics',
  'SharedArrayBuffer',
  'eval',
  'undefined',
  'NaN',
  'Infinity',
  'isNaN',
  'isFinite',
  'parseInt',
  'parseFloat',
  'console',
  'performance',
  'setTimeout',
  'clearTimeout',
  'setInterval',
  'clearInterval',
  'queueMicrotask',
  'structuredClone',
  'URL',
  'URLSearchParams',
  'TextEncoder',
  'TextDecoder',
  'fetch',
  'Headers',
  'Request',
  'Response',
  'egress',
  'input',
  'final_answer',
  'ToolError',
  'NoSuchToolError',
  'ToolValidationError',
  'ToolRejectedError',
  'arguments',
  'await',
  'async',
  'yield',
  'let',
  'var',
  'const',
  'function',
  'class',
  'return',
  'this',
  'new',
  'delete',
  'typeof',
  'void',
  'null',
  'true',
  'false',
  'if',
  'else',
  'for',
  'while',
  'do',
  'switch',
  'case',
  'break',
  'continue',
  'try',
  'catch',
  'finally',
  'throw',
  'import',
  'export',
  'default',
  'with',
  'in',
  'instanceof',
  'enum',
]);

type SchemaInput = JsonSchema | z.ZodType;

/** Arguments as `execute` receives them: inferred from a zod schema, a plain record for JSON Schema. */
export type ToolArgs<S> = S extends z.ZodType ? z.output<S> : Record<string, unknown>;

export interface DefineToolOptions<S extends SchemaInput, Result> {
  name: string;
  description: string;
  /** JSON Schema or a zod schema for the arguments. */
  input?: S;
  output?: SchemaInput;
  namespace?: string;
  /** Default `unsafe`: the only safe assumption for a tool that declares nothing. */
  effect?: ToolEffect;
  /** Default false; `true` when `approval` is given. */
  requiresApproval?: ApprovalPolicy;
  /**
   * Who may decide its approvals and when a request expires, e.g. `{ roles: ['approver'], separation: true,
   * expiresAfterSeconds: 3600 }` (ADR 0031). The operator's config may only tighten it.
   */
  approval?: ToolApproval;
  /**
   * What a revised program (ADR 0034) does when it calls this tool with other arguments than an earlier
   * attempt's completed call: `pause` for a human (default for `keyed` and `unsafe` tools) or `run`.
   */
  revisedCall?: RevisedCallPolicy;
  /**
   * What one call costs against a task's `max_cost` budget (ADR 0044): a number of 0 or more, or a function of the
   * call's arguments (as the program passed them, before they are validated) that returns one. Default 1.
   */
  cost?: number | ((args: ToolArgs<S>) => number);
  /**
   * The tool's budget in every task, e.g. `{ maxCalls: 5, maxWallSeconds: 60 }`: a call past it fails with
   * TOOL_BUDGET_EXCEEDED and never runs. A task's `budgets.tools` may only tighten it (ADR 0044).
   */
  budget?: ToolBudget;
  execute(args: ToolArgs<S>, ctx: ToolContext): Result | Promise<Result>;
}

/** Defines a tool the guest can call as `await <namespace>.<name>(args)`. */
export function defineTool<S extends SchemaInput = JsonSchema, Result = unknown>(
  options: DefineToolOptions<S, Result>,
): ToolDefinition {
  const namespace = options.namespace ?? DEFAULT_TOOL_NAMESPACE;
  checkName('name', options.name, TOOL_NAME, RESERVED_TOOL_NAMES);
  checkName(
    'namespace',
    namespace,
    IDENTIFIER,
    namespace === DEFAULT_TOOL_NAMESPACE ? new Set() : RESERVED_NAMESPACES,
  );
  const effect = options.effect ?? 'unsafe';
  if (!TOOL_EFFECTS.includes(effect)) {
    throw new CodecallError(
      'INVALID_ARGUMENT',
      `tool ${options.name}: effect must be one of ${TOOL_EFFECTS.join(', ')}`,
    );
  }
  if (typeof options.execute !== 'function') {
    throw new CodecallError('INVALID_ARGUMENT', `tool ${options.name}: execute must be a function`);
  }
  const approval =
    options.approval === undefined
      ? undefined
      : checkToolApproval(options.name, options.approval, options.requiresApproval);
  const tool: ToolDefinition = {
    namespace,
    name: options.name,
    description: options.description,
    inputSchema: toJsonSchema(options.input ?? { type: 'object' }),
    ...(options.output === undefined ? {} : { outputSchema: toJsonSchema(options.output) }),
    effect,
    // Declaring how its approvals are decided says that it needs them.
    requiresApproval: options.requiresApproval ?? approval !== undefined,
    ...(approval === undefined ? {} : { approval }),
    ...(options.revisedCall === undefined
      ? {}
      : { revisedCall: checkRevisedCall(options.name, options.revisedCall) }),
    ...(options.cost === undefined ? {} : { cost: checkToolCost(options.name, options.cost) }),
    ...(options.budget === undefined ? {} : { budget: checkToolBudget(options.name, options.budget) }),
    execute: (args: unknown, ctx: ToolContext) => options.execute(args as ToolArgs<S>, ctx),
  };
  // Not enumerable: a copy (`{ ...tool }`) is a hand-built definition, and equality checks ignore it.
  Object.defineProperty(tool, TOOL_BRAND, { value: true });
  return Object.freeze(tool);
}

function checkRevisedCall(name: string, value: unknown): RevisedCallPolicy {
  if (value === 'pause' || value === 'run') return value;
  throw new CodecallError('INVALID_ARGUMENT', `tool ${name}: revisedCall must be "pause" or "run"`, {
    details: { field: 'revisedCall' },
  });
}

function checkName(what: string, value: unknown, form: RegExp, reserved: ReadonlySet<string>): void {
  if (typeof value !== 'string' || !form.test(value) || reserved.has(value)) {
    const shape =
      form === IDENTIFIER
        ? 'a JavaScript identifier'
        : "a JavaScript identifier, '-' allowed after its first character, at most 128 characters,";
    throw new CodecallError(
      'INVALID_ARGUMENT',
      `tool ${what} ${JSON.stringify(value)} must be ${shape} and not a reserved name`,
      { details: { field: what } },
    );
  }
}

/**
 * A zod (v4) schema, from this copy of zod or another one (the tools module's own): zod's classes differ
 * between copies, its `_zod` internals do not.
 */
function isZodSchema(schema: unknown): schema is z.ZodType {
  return (
    schema instanceof z.ZodType ||
    (typeof schema === 'object' &&
      schema !== null &&
      typeof (schema as { _zod?: { def?: unknown } })._zod?.def === 'object')
  );
}

function toJsonSchema(schema: SchemaInput): JsonSchema {
  if (isZodSchema(schema)) {
    const { $schema: _drop, ...rest } = z.toJSONSchema(schema) as JsonSchema;
    return rest;
  }
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    throw new CodecallError('INVALID_ARGUMENT', 'a tool schema must be a JSON Schema object or a zod schema');
  }
  return schema;
}
