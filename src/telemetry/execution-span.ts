import { context, trace } from '@opentelemetry/api';
import type { Context } from '@opentelemetry/api';
import type { ExecutionLimits, ExecutionResult, SandboxDriver } from '../spec/index.ts';
import { contentAttribute, setDefined, setErrorCode, tracer } from './tracer.ts';

export interface ExecutionSpanInput {
  readonly driver: SandboxDriver;
  readonly language: string;
  readonly code: string;
  readonly limits?: Partial<ExecutionLimits>;
  /** Calls the journal holds for this execution (replayed, not run). */
  readonly replayed: number;
}

/**
 * A sandbox execution as a span (`codecall.sandbox.execute`): the driver, the limits it ran under and the resources
 * it used; `run` gets the span's context, the parent of the execution's tool calls.
 */
export async function traceExecution(
  input: ExecutionSpanInput,
  run: (ctx: Context) => Promise<ExecutionResult>,
): Promise<ExecutionResult> {
  const { driver, limits } = input;
  const span = tracer().startSpan('codecall.sandbox.execute', {
    attributes: {
      'codecall.sandbox.driver': driver.name,
      'codecall.sandbox.engine': driver.engine,
      'codecall.sandbox.language': input.language,
      'codecall.replayed_calls': input.replayed,
    },
  });
  if (span.isRecording()) {
    setDefined(span, {
      'codecall.sandbox.limit.timeout_ms': limits?.timeoutMs,
      'codecall.sandbox.limit.memory_bytes': limits?.memoryBytes,
      'codecall.sandbox.limit.max_tool_calls': limits?.maxToolCalls,
      'codecall.sandbox.limit.cpu_ms': limits?.cpuMs,
      'codecall.sandbox.code': contentAttribute(input.code),
    });
  }
  const ctx = trace.setSpan(context.active(), span);
  try {
    const result = await context.with(ctx, () => run(ctx));
    if (span.isRecording()) {
      const r = result.resources;
      setDefined(span, {
        'codecall.sandbox.status': result.status,
        'codecall.sandbox.wall_ms': r.wallMs,
        'codecall.sandbox.cpu_ms': r.cpuMs,
        'codecall.sandbox.memory_bytes': r.memoryBytes,
        'codecall.sandbox.tool_calls': r.toolCalls,
      });
      if (result.status === 'failed') setErrorCode(span, result.error.code, result.error.message);
    }
    return result;
  } catch (e) {
    setErrorCode(span, 'INTERNAL', String(e));
    throw e;
  } finally {
    span.end();
  }
}
