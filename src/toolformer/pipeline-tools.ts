import { CodecallError } from '../errors/index.ts';
import type { CompletionsSampler, PromptLogprobsClient } from '../model/index.ts';
import type { ToolDefinition } from '../spec/index.ts';
import { DEFAULT_TOOL_NAMESPACE, defineTool } from '../tools/index.ts';
import { inlineArguments } from './execute-call.ts';
import { promptTemplateFor, sampleCallsAt, samplePositions, type SamplingOptions } from './sample-calls.ts';
import { scoreSample, type ScoreOptions } from './score-sample.ts';

/** The namespace of the pipeline's own steps in a run's program (`toolformer.sample(...)`). */
export const TOOLFORMER_NAMESPACE = 'toolformer';

export interface PipelineToolsOptions extends SamplingOptions, Omit<ScoreOptions, 'signal'> {
  /** Scores texts (echo + logprobs); for positions it must list enough top tokens (`topLogprobs`, e.g. 10). */
  readonly positionsClient: PromptLogprobsClient;
  readonly scoringClient: PromptLogprobsClient;
  readonly sampler: CompletionsSampler;
  /** The tools calls are sampled for (their schemas make a call's arguments; their descriptions a prompt). */
  readonly tools: readonly ToolDefinition[];
  /** Counts each live step as it ends (the CLI's progress line); replayed steps do not come here. */
  readonly onStep?: (step: 'positions' | 'sample' | 'score', outcome?: { keep: boolean }) => void;
}

/** Model errors that say the server cannot be used now: the task waits (TOOL_UNAVAILABLE) instead of failing. */
const SERVER_DOWN = new Set(['MODEL_UNAVAILABLE', 'MODEL_AUTH', 'MODEL_REQUEST_INVALID']);

/**
 * The pipeline's model steps as tools of namespace `toolformer`, so that a run's program calls them and the
 * journal keeps each one's outcome like any tool call's (ADR 0052, amended): a resumed run is served the
 * journaled positions, samples and scores and asks the model nothing again. All three only read (`read`: a step
 * cut off by a crash runs again). A model server that cannot be reached or refuses ends the run with
 * TOOL_UNAVAILABLE (in doubt, so it runs again on resume) and the task waits to be resumed.
 */
export function toolformerPipelineTools(options: PipelineToolsOptions): ToolDefinition[] {
  const byName = new Map(
    options.tools.map((t) => [
      t.namespace === DEFAULT_TOOL_NAMESPACE ? t.name : `${t.namespace}.${t.name}`,
      t,
    ]),
  );
  const template = (tool: string): string => promptTemplateFor(tool, options, byName.get(tool)?.description);
  const guard = async <T>(run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (error) {
      if (error instanceof CodecallError && SERVER_DOWN.has(error.code)) {
        throw new CodecallError('TOOL_UNAVAILABLE', `the Toolformer model server: ${error.message}`, {
          details: { unreachable: 'in_doubt', model_code: error.code },
          cause: error,
        });
      }
      throw error;
    }
  };
  const text = { type: 'string', minLength: 1, maxLength: 1_000_000 };
  const toolName = { type: 'string', minLength: 1, maxLength: 200 };
  return [
    defineTool({
      namespace: TOOLFORMER_NAMESPACE,
      name: 'positions',
      description:
        "The text's candidate call positions for a tool: P([) after its few-shot prompt, top k above tau_s",
      input: {
        type: 'object',
        properties: { tool: toolName, text },
        required: ['tool', 'text'],
        additionalProperties: false,
      },
      effect: 'read',
      execute: async ({ tool, text: body }: Record<string, unknown>, ctx) => {
        const found = await guard(() =>
          samplePositions(options.positionsClient, template(tool as string), body as string, {
            ...options,
            signal: ctx.signal,
          }),
        );
        options.onStep?.('positions');
        return found;
      },
    }),
    defineTool({
      namespace: TOOLFORMER_NAMESPACE,
      name: 'sample',
      description: 'm calls of a tool sampled at one position of the text, with the arguments the tool takes',
      input: {
        type: 'object',
        properties: { tool: toolName, text, at: { type: 'integer', minimum: 1 } },
        required: ['tool', 'text', 'at'],
        additionalProperties: false,
      },
      effect: 'read',
      execute: async ({ tool, text: body, at }: Record<string, unknown>, ctx) => {
        const name = tool as string;
        const sampled = await guard(() =>
          sampleCallsAt(options.sampler, template(name), body as string, at as number, name, {
            ...options,
            signal: ctx.signal,
          }),
        );
        const definition = byName.get(name);
        options.onStep?.('sample');
        return {
          calls: sampled.calls.map((c) => ({
            input: c.input,
            arguments: definition === undefined ? { input: c.input } : inlineArguments(definition, c.input),
          })),
          bad: sampled.bad,
        };
      },
    }),
    defineTool({
      namespace: TOOLFORMER_NAMESPACE,
      name: 'score',
      description: 'L_no_call, L_same, L_call of a sample and whether min(L_no_call, L_same) - L_call >= tau',
      input: {
        type: 'object',
        properties: {
          prefix: text,
          continuation: text,
          tool: toolName,
          input: { type: 'string' },
          result: { type: 'string' },
        },
        required: ['prefix', 'continuation', 'tool', 'input', 'result'],
        additionalProperties: false,
      },
      effect: 'read',
      execute: async (sample: Record<string, unknown>, ctx) => {
        const scored = await guard(() =>
          scoreSample(options.scoringClient, sample as never, { ...options, signal: ctx.signal }),
        );
        options.onStep?.('score', { keep: scored.keep });
        return scored;
      },
    }),
  ];
}
