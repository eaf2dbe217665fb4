// The layer diagram of src/: what each folder may import (besides itself and packages). eslint.config.js turns it
// into import zones; test/architecture/layers.test.ts checks every import against it (type-only ones included)
// and docs/architecture.md shows it. Change it here, on purpose, and say why in the architecture doc.
/** What the service composes: every layer below it. */
const SERVICE = [
  'errors',
  'spec',
  'codec',
  'api',
  'tools',
  'sandbox',
  'store',
  'model',
  'auth',
  'durable',
  'metrics',
  'agent',
  'egress',
  'mcp',
  'telemetry',
];

/** @type {Readonly<Record<string, readonly string[]>>} */
export const LAYERS = Object.freeze({
  // One table of error codes; depends on nothing.
  errors: [],
  // Contracts: the interfaces a second implementation plugs into (store, sandbox, journal, tools, model, agent).
  spec: ['errors'],
  // Tracing over @opentelemetry/api only (a no-op until the service or CLI registers a provider, ADR 0053).
  telemetry: ['errors', 'spec'],
  // Values across the sandbox boundary: tagged JSON, canonical JSON, hashes.
  codec: ['errors'],
  // The wire: the runtime's API as callers see it (Runtime, SubmitInput, the snake_case views, events).
  api: ['errors', 'spec'],
  tools: ['errors', 'spec', 'codec'],
  sandbox: ['errors', 'spec', 'codec'],
  store: ['errors', 'spec', 'codec'],
  // The model client speaks HTTP to a provider and knows nothing of tasks, sandboxes or storage; it validates
  // streamed replies and writes GBNF with the grammar engine (ADR 0057), and traces its requests (ADR 0053).
  model: ['errors', 'spec', 'grammar', 'telemetry'],
  // API keys and who a caller is; knows no wire.
  auth: ['errors', 'spec', 'codec'],
  // The journal, replay and the runtime, over the contracts only: drivers, stores and agents are given to it.
  durable: ['errors', 'spec', 'codec', 'api', 'telemetry'],
  metrics: ['errors', 'spec', 'api'],
  // The agent implements spec's TaskAgent over the model client; the service composes it.
  agent: ['errors', 'spec', 'codec', 'model', 'tools', 'telemetry'],
  // The host side of a task's network access: requests under its allowlist, to public addresses only.
  egress: ['errors', 'spec', 'codec', 'telemetry'],
  // MCP servers as tool providers: their tools as ToolDefinitions over the official SDK (ADR 0047).
  mcp: ['errors', 'spec', 'tools', 'telemetry'],
  // codecall as an MCP server (ADR 0049): the code-mode pair and the task surface over a Runtime.
  mcpserver: ['errors', 'spec', 'codec', 'api', 'tools', 'agent'],
  // Constrained decoding (ADR 0051): JSON Schema to grammars, the byte matcher, GBNF/Lark/regex exports.
  grammar: ['errors', 'spec'],
  // Toolformer (issue 24): tool-use training data from plain text, scored by a model's log-probabilities and
  // run through codecall's own tool path; a library the CLI composes.
  toolformer: ['errors', 'spec', 'codec', 'tools', 'model', 'durable'],
  // A remote caller of the HTTP API: the wire types only, never the server's runtime.
  client: ['errors', 'spec', 'api'],
  // The composition root of the service's core (no HTTP).
  service: SERVICE,
  // Leaves: the HTTP API (its serve.ts puts it over the service) and the command line.
  http: ['errors', 'spec', 'codec', 'api', 'auth', 'metrics', 'service', 'mcpserver', 'telemetry'],
  cli: [...SERVICE, 'client', 'service', 'http', 'mcpserver', 'grammar', 'toolformer'],
});

/** Files that run inside the sandbox: they import nothing from src/. */
export const GUEST_FILES = Object.freeze([
  'src/sandbox/quickjs/guest-runtime.ts',
  'src/sandbox/quickjs/guest-web.ts',
  'src/sandbox/quickjs/guest-url.ts',
  'src/sandbox/quickjs/guest-fetch.ts',
]);
