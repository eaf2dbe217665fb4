// The public API of codecall: what a user builds on, chosen on purpose. Its report (docs/api-report.md) is
// checked by test/architecture/api-report.test.ts; everything else is behind `codecall/internal`.

// Errors: one class, one table of stable codes.
export {
  CodecallError,
  isCodecallError,
  isErrorCode,
  ERROR_CODES,
  ERROR_KINDS,
  errorRow,
} from './errors/index.ts';
export type { CodecallErrorOptions, ErrorCode, ErrorKind, ErrorRow } from './errors/index.ts';

// Contracts (types only): the interfaces a second store, sandbox, tool host, model client or agent implements.
export type * from './spec/index.ts';
export {
  AGENT_MODES,
  DEFAULT_LIMITS,
  isTerminal,
  SANDBOX_DRIVER_API_VERSION,
  TERMINAL_STATUSES,
  TOOL_EFFECTS,
} from './spec/index.ts';

// The runtime's API as its callers see it: Runtime, SubmitInput, the task views, events.
export type * from './api/index.ts';

// Tools and running a program once.
export { defineTool, DEFAULT_TOOL_NAMESPACE, ToolRegistry, runProgram } from './tools/index.ts';
export type { DefineToolOptions, RunProgramOptions, ToolArgs } from './tools/index.ts';
// MCP servers as tool providers (ADR 0047): their tools as ToolDefinitions, `tools.<server>.<tool>`.
export { connectMcpServers } from './mcp/index.ts';
// codecall as an MCP server (ADR 0049): search_tools/execute and the task surface over a runtime, as one caller.
export { createCodecallMcpServer, runtimeTaskBackend } from './mcpserver/index.ts';
export type { CodecallMcpServerOptions, RuntimeTaskBackendOptions, TaskBackend } from './mcpserver/index.ts';
export type {
  ConnectMcpOptions,
  McpEnvironment,
  McpServerConfig,
  McpServerInfo,
  McpServers,
  McpToolOverride,
} from './mcp/index.ts';

// Sandboxes.
export {
  availableDrivers,
  createPythonDriver,
  createQuickJsDriver,
  probePython,
  PYTHON_DEFAULT_LIMITS,
  typeScriptLowering,
} from './sandbox/index.ts';
export type {
  AvailableDrivers,
  PythonDriverOptions,
  PythonProbe,
  QuickJsDriverOptions,
} from './sandbox/index.ts';

// Storage.
export { createPostgresTaskStore, createSqliteTaskStore, verifyStore } from './store/index.ts';
export type {
  PostgresTaskStore,
  PostgresTaskStoreOptions,
  SqliteTaskStore,
  SqliteTaskStoreOptions,
  StoreIntegrity,
} from './store/index.ts';

// Durable tasks.
export { createRuntime } from './durable/index.ts';
export type { LimitCeilings, RuntimeOptions } from './durable/index.ts';

// Models and agents.
export { createOpenAiClient, modelConfigFrom, MODEL_PROVIDERS, PROVIDER_PRESETS } from './model/index.ts';
export type {
  ModelConfig,
  ModelProvider,
  ModelWarning,
  OpenAiClientOptions,
  ProviderPreset,
  ResponseConstraint,
  WarningSink,
} from './model/index.ts';
export { agentForModel, createAgent } from './agent/index.ts';
export type { AgentOptions } from './agent/index.ts';

// The service: its core, the HTTP API over it, metrics, and a client of the API.
export { createService, loadConfig, loadModelConfig } from './service/index.ts';
export type { CreateServiceOptions, LoadConfigOptions, ServiceConfig, ServiceCore } from './service/index.ts';
export { buildServer, startService } from './http/index.ts';
export type { ServerOptions, Service, StartServiceOptions } from './http/index.ts';
export { createMetrics } from './metrics/index.ts';
export type { Metrics, MetricsOptions } from './metrics/index.ts';
export { createClient } from './client/index.ts';

// Toolformer: training data for tool use from plain text (docs/toolformer.md, ADR 0052).
export { createCompletionsSampler, createPromptLogprobsClient } from './model/index.ts';
export type { CompletionsSampler, PromptLogprobsClient } from './model/index.ts';
export {
  chatFormLine,
  DEFAULT_TOOLFORMER_TAU,
  deltaHistogramSvg,
  inlineFormLine,
  judgeSample,
  keptSamples,
  lossWeights,
  sampleCallsAt,
  samplePositions,
  scoreCorpus,
  scoreSample,
  shardProgram,
  toolformerPipelineTools,
  weightedLoss,
} from './toolformer/index.ts';
export type {
  CandidateSample,
  KeptSample,
  PipelineToolsOptions,
  SampleJudgement,
  SampleLosses,
  ScoredSample,
  ScoreCorpusOptions,
  ShardLine,
  ShardOutput,
  ShardProgramOptions,
} from './toolformer/index.ts';
