import { createOpenAiClient, PROVIDER_PRESETS } from '../model/index.ts';
import type { ModelConfig, ResponseConstraint } from '../model/index.ts';
import type { TaskAgent, ToolDefinition, TypeScriptLowering } from '../spec/index.ts';
import { createAgent } from './create-agent.ts';

/**
 * The agent of a composition root (service, CLI): a client for the configured model, strict function schemas
 * where the provider takes them; without a model, instruction tasks fail with MODEL_NOT_CONFIGURED. `tools` are the
 * runner's: each task's prompt lists the set its programs can call (the runner's word for the task, ADR 0047).
 */
export function agentForModel(
  model: ModelConfig | null,
  tools: readonly ToolDefinition[],
  options: {
    readonly rerunReads?: boolean;
    readonly lowering?: TypeScriptLowering;
    /** Stream replies with a schema and validate them as they come (ADR 0057). */
    readonly streamValidation?: boolean;
    readonly responseConstraint?: ResponseConstraint;
  } = {},
): TaskAgent {
  if (!model) return createAgent({ model: null, tools, followRunnerTools: true });
  return createAgent({
    model: createOpenAiClient({
      ...model,
      ...(options.streamValidation === true ? { streamValidation: true } : {}),
      ...(options.responseConstraint === undefined ? {} : { responseConstraint: options.responseConstraint }),
    }),
    tools,
    followRunnerTools: true,
    strictTools: PROVIDER_PRESETS[model.provider].strictTools,
    ...(options.rerunReads ? { rerunReads: true } : {}),
    ...(options.lowering ? { lowering: options.lowering } : {}),
  });
}
