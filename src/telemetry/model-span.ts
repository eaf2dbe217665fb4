import { context, trace } from '@opentelemetry/api';
import { SpanKind } from '@opentelemetry/api';
import type { ModelReply, ModelRequest } from '../spec/index.ts';
import { contentAttribute, setDefined, setErrorCode, tracer } from './tracer.ts';

export interface ModelSpanInput {
  /** The provider preset (`openai`, `mistral`, `llamacpp`, ...): `gen_ai.provider.name` and `gen_ai.system`. */
  readonly provider: string;
  readonly model: string;
  readonly request: ModelRequest;
}

/**
 * A model request as a client span by the GenAI semantic conventions (`chat {model}`): the provider, the
 * model asked and the one that answered, the tokens, the finish reason. The messages go in only with
 * `otelIncludeContent`.
 */
export async function traceModelRequest(
  input: ModelSpanInput,
  send: () => Promise<ModelReply>,
): Promise<ModelReply> {
  const { provider, model, request } = input;
  const span = tracer().startSpan(`chat ${model}`, {
    kind: SpanKind.CLIENT,
    attributes: {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': provider,
      'gen_ai.system': provider,
      'gen_ai.request.model': model,
    },
  });
  if (span.isRecording()) {
    setDefined(span, {
      'gen_ai.request.temperature': request.temperature,
      'gen_ai.request.max_tokens': request.maxTokens,
      'gen_ai.input.messages': contentAttribute(JSON.stringify(request.messages)),
    });
  }
  try {
    const reply = await context.with(trace.setSpan(context.active(), span), send);
    if (span.isRecording()) {
      setDefined(span, {
        'gen_ai.response.model': reply.model,
        'gen_ai.usage.input_tokens': reply.usage.promptTokens,
        'gen_ai.usage.output_tokens': reply.usage.completionTokens,
        'gen_ai.response.finish_reasons': [reply.finishReason],
        'gen_ai.output.messages': contentAttribute(reply.content ?? undefined),
      });
    }
    return reply;
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    setErrorCode(span, typeof code === 'string' ? code : 'MODEL_UNAVAILABLE', String(e));
    throw e;
  } finally {
    span.end();
  }
}

/** One agent step (a model request and the program it ran) as a span, `codecall.agent.step`. */
export async function traceAgentStep<T>(run: (setStep: (n: number) => void) => Promise<T>): Promise<T> {
  const span = tracer().startSpan('codecall.agent.step', {
    attributes: { 'gen_ai.operation.name': 'invoke_agent' },
  });
  try {
    return await context.with(trace.setSpan(context.active(), span), () =>
      run((n) => span.setAttribute('codecall.agent.step', n)),
    );
  } catch (e) {
    setErrorCode(span, 'INTERNAL', String(e));
    throw e;
  } finally {
    span.end();
  }
}
