import { jsonArguments, TAG } from '../codec/index.ts';
import { CodecallError, failure } from '../errors/index.ts';
import type {
  ExecutionHost,
  GuestToolBinding,
  HostCall,
  HostOutcome,
  LogEntry,
  ToolDefinition,
} from '../spec/index.ts';
import { longSleep } from '../spec/index.ts';
import { finalOutput, isAsyncIterable } from './final-output.ts';
import { SchemaValidator } from './schema-validator.ts';
import { serializeToolError } from './tool-error.ts';

export interface ToolHostOptions {
  onLog?: (entry: LogEntry) => void;
  /** Where the lines tools write (`ctx.log`) go; default `onLog`. */
  onToolLog?: (entry: LogEntry) => void;
  validator?: SchemaValidator;
}

/** A tool's log line is cut at this many characters, and a call writes at most this many (a chatty server). */
const TOOL_LOG_LINE_CHARS = 1_000;
const TOOL_LOG_LINES_PER_CALL = 200;

/** `ctx.log` of one call: lines prefixed with the tool's name, bounded in length and number. */
function toolLog(
  sink: ((entry: LogEntry) => void) | undefined,
  tool: string,
): ((message: string) => void) | undefined {
  if (!sink) return undefined;
  let lines = 0;
  return (message) => {
    lines += 1;
    if (lines > TOOL_LOG_LINES_PER_CALL + 1) return;
    const text =
      lines > TOOL_LOG_LINES_PER_CALL
        ? `further lines of this call are not shown (${TOOL_LOG_LINES_PER_CALL} written)`
        : String(message).slice(0, TOOL_LOG_LINE_CHARS);
    try {
      sink({ level: 'info', message: `[${tool}] ${text}` });
    } catch {
      // A sink's failure is its own; the call goes on.
    }
  };
}

/** A set of tools checked for duplicates, ready to serve executions. */
export class ToolRegistry {
  readonly bindings: readonly GuestToolBinding[];
  private readonly byKey = new Map<string, ToolDefinition>();
  private readonly validator: SchemaValidator;

  constructor(tools: readonly ToolDefinition[], validator = SchemaValidator.shared) {
    this.validator = validator;
    for (const tool of tools) {
      const key = `${tool.namespace}.${tool.name}`;
      if (this.byKey.has(key)) throw new CodecallError('INVALID_ARGUMENT', `tool ${key} is defined twice`);
      validator.compile(tool.inputSchema);
      if (tool.outputSchema) validator.compile(tool.outputSchema);
      this.byKey.set(key, tool);
    }
    // `tools.github.create_issue` makes `tools.github` a group of tools (an MCP server's): no tool may have its name.
    for (const tool of this.byKey.values()) {
      const dot = tool.name.indexOf('.');
      if (dot > 0 && this.byKey.has(`${tool.namespace}.${tool.name.slice(0, dot)}`)) {
        throw new CodecallError(
          'INVALID_ARGUMENT',
          `tool ${tool.namespace}.${tool.name.slice(0, dot)} has the name of a group of tools (${tool.namespace}.${tool.name})`,
        );
      }
    }
    this.bindings = [...this.byKey.values()].map((t) => ({ namespace: t.namespace, name: t.name }));
  }

  /** Every tool, in definition order. */
  get definitions(): readonly ToolDefinition[] {
    return [...this.byKey.values()];
  }

  get size(): number {
    return this.byKey.size;
  }

  get(namespace: string, name: string): ToolDefinition | undefined {
    return this.byKey.get(`${namespace}.${name}`);
  }

  names(namespace: string): string[] {
    return this.bindings.filter((b) => b.namespace === namespace).map((b) => b.name);
  }

  /** The host side of one execution: validates, runs the tool, and reports errors as data. */
  host(options: ToolHostOptions = {}): ExecutionHost {
    return {
      call: (call, signal) => this.serve(call, signal, options.onToolLog ?? options.onLog),
      ...(options.onLog ? { onLog: options.onLog } : {}),
    };
  }

  private async serve(
    call: HostCall,
    signal: AbortSignal,
    logSink?: (entry: LogEntry) => void,
  ): Promise<HostOutcome> {
    if (call.kind === 'timer') {
      await longSleep(call.delayMs, signal);
      return { ok: true, value: undefined };
    }
    const tool = this.get(call.namespace, call.name);
    if (!tool) {
      const available = this.names(call.namespace);
      const listing = available.join(', ') || '(none)';
      return {
        ok: false,
        error: failure('NO_SUCH_TOOL', `no tool ${call.namespace}.${call.name}; available: ${listing}`, {
          available,
        }),
      };
    }
    // What a JSON caller would send (ADR 0002): no undefined property, no NaN or Infinity. Arguments that crossed
    // without a tag (plain JSON, the usual case) hold none of them.
    const args =
      call.argsJson !== undefined && !call.argsJson.includes(`"${TAG}"`)
        ? call.args
        : jsonArguments(call.args);
    const violation = this.validator.validate(tool.inputSchema, args);
    if (violation) {
      const where = violation.field === '' ? 'arguments' : `"${violation.field}"`;
      const message = `invalid arguments for ${call.namespace}.${call.name}: ${where} ${violation.message}`;
      return { ok: false, error: failure('TOOL_VALIDATION', message, { field: violation.field }) };
    }
    const log = toolLog(logSink, `${call.namespace}.${call.name}`);
    let value: unknown;
    try {
      value = await tool.execute(args, {
        signal,
        callId: call.callId,
        ...(call.idempotencyKey === undefined ? {} : { idempotencyKey: call.idempotencyKey }),
        ...(call.fencingToken === undefined ? {} : { fencingToken: call.fencingToken }),
        ...(log ? { log } : {}),
        ...(call.requestInput ? { requestInput: call.requestInput } : {}),
        ...(call.traceContext ? { traceContext: call.traceContext } : {}),
      });
      if (isAsyncIterable(value)) value = await finalOutput(value, signal);
    } catch (thrown) {
      return { ok: false, error: serializeToolError(thrown) };
    }
    if (tool.outputSchema) {
      const bad = this.validator.validate(tool.outputSchema, value);
      if (bad) {
        const message = `${call.namespace}.${call.name} returned an invalid result: ${bad.field || 'value'} ${bad.message}`;
        return { ok: false, error: failure('TOOL_RESULT_INVALID', message, { field: bad.field }) };
      }
    }
    return { ok: true, value };
  }
}
