export { createAgent } from './create-agent.ts';
export type { AgentOptions } from './create-agent.ts';
export { readAgentSteps, journalCallId } from './agent-journal.ts';
export type { AgentStep, StepResult, CallResult, StepError } from './agent-journal.ts';
export { composeProgram, lineInCurrent } from './compose-program.ts';
export { systemPrompt, RUN_CODE_TOOL } from './prompts.ts';
