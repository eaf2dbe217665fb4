import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { STORE_FAULT_KINDS, isTerminal } from '../spec/index.ts';
import type { SandboxObserver, StoreHealthEvent, TaskStatus, TaskStore } from '../spec/index.ts';
import { ControlLatency } from './control-latency.ts';
import { ToolCallTimer } from './tool-call-timer.ts';
import type { Runtime, RuntimeEvent, RuntimeObserver } from '../api/index.ts';

export interface MetricsOptions {
  /** Counted on each scrape (queue depth, tasks by status). */
  readonly store: TaskStore;
  /** Watched at once; or later with `watch()` (a runtime built with `runtimeObserver` needs the metrics first). */
  readonly runtime?: Runtime;
  /** Default: a registry of its own (never prom-client's global one). */
  readonly registry?: Registry;
  /** Node process metrics (`codecall_process_*`, `codecall_nodejs_*`); default true. */
  readonly processMetrics?: boolean;
}

export type TokenKind = 'prompt' | 'completion';

/** Where an error was counted: a task that failed, or an HTTP error response. */
export type ErrorSource = 'task' | 'http';

export interface Metrics {
  readonly registry: Registry;
  /** For `createQuickJsDriver({ observer })`: sandbox create and destroy times. */
  readonly sandboxObserver: SandboxObserver;
  /** For `createRuntime({ observer })`: pause and resume latency. */
  readonly runtimeObserver: RuntimeObserver;
  /** Takes the runtime's events (task durations, tool calls, failures); returns the unsubscribe. */
  watch(runtime: Runtime): () => void;
  /** Model tokens used; fed by the agent layer once there is one (no model exists yet). */
  addModelTokens(kind: TokenKind, count: number): void;
  countError(source: ErrorSource, code: string): void;
  observeHttp(request: { route: string; method: string; statusCode: number; seconds: number }): void;
  /** A request held for its tenant's share of the event loop (ADR 0039), and for how long. */
  observeHeld(seconds: number): void;
  /** The store's health events (`createSqliteTaskStore({ onHealth })`): failures by kind, open faults. */
  observeStoreHealth(event: StoreHealthEvent): void;
  /** Stops watching the runtimes. */
  close(): void;
}

/** Live statuses counted on scrape; ended tasks are counted by `task_duration_seconds_count{status}` instead. */
const LIVE_STATUSES = ['pending', 'running', 'paused'] as const satisfies readonly TaskStatus[];

const FAST_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
const SLOW_BUCKETS = [0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600];

/** The service's Prometheus metrics (all `codecall_*`), fed by the runtime's events and hooks and the store. */
export function createMetrics(options: MetricsOptions): Metrics {
  const registry = options.registry ?? new Registry();
  if (options.processMetrics !== false) collectDefaultMetrics({ register: registry, prefix: 'codecall_' });
  const registers = [registry];

  const taskDuration = new Histogram({
    name: 'codecall_task_duration_seconds',
    help: 'Time from a task being created to its end, by final status',
    labelNames: ['status'],
    buckets: SLOW_BUCKETS,
    registers,
  });
  const liveCounts = shared(async () => {
    const counts = await Promise.all(LIVE_STATUSES.map((status) => options.store.countTasks({ status })));
    return new Map(LIVE_STATUSES.map((status, i) => [status, counts[i] ?? 0]));
  });
  new Gauge({
    name: 'codecall_queue_depth',
    help: 'Tasks waiting to be claimed (pending), read from the store at scrape',
    registers,
    async collect() {
      const counts = await liveCounts().catch(() => null);
      if (counts) this.set(counts.get('pending') ?? 0);
    },
  });
  new Gauge({
    name: 'codecall_tasks',
    help: 'Tasks not yet ended, by status, read from the store at scrape',
    labelNames: ['status'],
    registers,
    async collect() {
      const counts = await liveCounts().catch(() => null);
      for (const [status, n] of counts ?? []) this.set({ status }, n);
    },
  });
  const sandboxCreate = new Histogram({
    name: 'codecall_sandbox_create_seconds',
    help: 'Time to create the sandbox (VM) an execution ran in',
    buckets: FAST_BUCKETS,
    registers,
  });
  const sandboxDestroy = new Histogram({
    name: 'codecall_sandbox_destroy_seconds',
    help: 'Time to tear an execution sandbox down',
    buckets: FAST_BUCKETS,
    registers,
  });
  const pauseLatency = new Histogram({
    name: 'codecall_pause_latency_seconds',
    help: 'Time from a pause being requested to the task being paused',
    buckets: FAST_BUCKETS,
    registers,
  });
  const resumeLatency = new Histogram({
    name: 'codecall_resume_latency_seconds',
    help: 'Time from a resume being requested to the task running again',
    buckets: FAST_BUCKETS,
    registers,
  });
  const toolCall = new Histogram({
    name: 'codecall_tool_call_seconds',
    help: 'Time a tool call took (intent to outcome; human waits excluded), by tool and outcome',
    labelNames: ['tool', 'outcome'],
    buckets: [...FAST_BUCKETS, 5, 10, 30, 60],
    registers,
  });
  const toolCallsCarried = new Counter({
    name: 'codecall_tool_calls_carried_total',
    help: 'Tool calls a revised program took over from an earlier attempt instead of running them (ADR 0034), by tool',
    labelNames: ['tool'],
    registers,
  });
  const budgetRefusals = new Counter({
    name: 'codecall_tool_budget_refusals_total',
    help: "Tool calls refused before they ran because they would pass one of their task's budgets (ADR 0044), by tool and budget",
    labelNames: ['tool', 'budget'],
    registers,
  });
  const limitRefusals = new Counter({
    name: 'codecall_tool_limit_refusals_total',
    help: "Tool calls refused before they ran because their tenant's rate limit or quota was used up (ADR 0045), by tool and limit",
    labelNames: ['tool', 'limit'],
    registers,
  });
  const errors = new Counter({
    name: 'codecall_errors_total',
    help: 'Errors by code: failed tasks (source task) and HTTP error responses (source http)',
    labelNames: ['source', 'code'],
    registers,
  });
  const modelTokens = new Counter({
    name: 'codecall_model_tokens_total',
    help: 'Model tokens used, by kind (fed by the agent layer)',
    labelNames: ['kind'],
    registers,
  });
  for (const kind of ['prompt', 'completion'] as const) modelTokens.inc({ kind }, 0);
  const httpRequests = new Counter({
    name: 'codecall_http_requests_total',
    help: 'HTTP requests by route, method and status code',
    labelNames: ['route', 'method', 'status_code'],
    registers,
  });
  const httpDuration = new Histogram({
    name: 'codecall_http_request_duration_seconds',
    help: 'HTTP request duration by route, method and status code',
    labelNames: ['route', 'method', 'status_code'],
    buckets: FAST_BUCKETS,
    registers,
  });

  const httpHeld = new Histogram({
    name: 'codecall_http_request_held_seconds',
    help: "Requests held for their tenant's share of the event loop while other tenants were active, by time held",
    buckets: SLOW_BUCKETS,
    registers,
  });

  const storeFailures = new Counter({
    name: 'codecall_store_failures_total',
    help: 'Store operations that failed with a fault an operator acts on, by kind (disk_full, read_only, ...)',
    labelNames: ['kind'],
    registers,
  });
  const storeFaults = new Gauge({
    name: 'codecall_store_fault',
    help: 'Whether the store is in a fault of this kind now (1) or not (0); it clears when a probe commits',
    labelNames: ['kind'],
    registers,
  });
  for (const kind of STORE_FAULT_KINDS) {
    storeFailures.inc({ kind }, 0);
    storeFaults.set({ kind }, 0);
  }

  const pausedVms = new Counter({
    name: 'codecall_paused_vm_resumes_total',
    help: 'Resumed journals by what they found of a kept paused VM: resumed from it, stale (replayed), missing (replayed)',
    labelNames: ['outcome'],
    registers,
  });
  for (const outcome of ['resumed', 'stale', 'missing']) pausedVms.inc({ outcome }, 0);

  const control = new ControlLatency((action, seconds) =>
    (action === 'pause' ? pauseLatency : resumeLatency).observe(seconds),
  );
  const tools = new ToolCallTimer((tool, ok, seconds) =>
    toolCall.observe({ tool, outcome: ok ? 'ok' : 'error' }, seconds),
  );
  const unsubscribes: (() => void)[] = [];

  /** Durations come from the stored timestamps: created_at to updated_at, which an ended task no longer moves. */
  async function taskEnded(taskId: string): Promise<void> {
    const task = await options.store.getTask(taskId).catch(() => null);
    if (!task || !isTerminal(task.status)) return;
    const seconds = (Date.parse(task.updatedAt) - Date.parse(task.createdAt)) / 1000;
    taskDuration.observe({ status: task.status }, Math.max(0, seconds));
    if (task.status === 'failed') errors.inc({ source: 'task', code: task.error?.code ?? 'UNKNOWN' });
  }

  const onEvent = (e: RuntimeEvent): void => {
    if (e.type === 'journal') {
      tools.onEntries(e.taskId, e.entries);
      for (const entry of e.entries) {
        if (entry.type !== 'tool_intent') continue;
        if (entry.data.carried_from) toolCallsCarried.inc({ tool: entry.data.tool });
        // Journaled once, live: a replay reads the journal but journals nothing again.
        const refused = entry.data.over_budget;
        if (refused === 'tenant_rate' || refused === 'tenant_quota') {
          limitRefusals.inc({ tool: entry.data.tool, limit: refused === 'tenant_rate' ? 'rate' : 'quota' });
        } else if (refused) budgetRefusals.inc({ tool: entry.data.tool, budget: refused });
      }
      // An agent's model replies carry the provider's token counts.
      for (const entry of e.entries) {
        if (entry.type !== 'model_reply') continue;
        const usage = entry.data.usage as { promptTokens?: unknown; completionTokens?: unknown } | undefined;
        metrics.addModelTokens('prompt', Number(usage?.promptTokens ?? 0));
        metrics.addModelTokens('completion', Number(usage?.completionTokens ?? 0));
      }
    }
    if (e.type !== 'status') return;
    control.onStatus(e.taskId, e.status);
    if (e.status === 'paused') tools.onPaused(e.taskId);
    if (isTerminal(e.status)) {
      tools.onEnded(e.taskId);
      void taskEnded(e.taskId);
    }
  };

  const metrics: Metrics = {
    registry,
    sandboxObserver: {
      sandboxCreated: (seconds) => sandboxCreate.observe(seconds),
      sandboxDestroyed: (seconds) => sandboxDestroy.observe(seconds),
    },
    runtimeObserver: {
      controlRequested: (taskId, action, accepted) => control.requested(taskId, action, accepted),
      pausedVm: (outcome) => pausedVms.inc({ outcome }),
    },
    watch(runtime) {
      const off = runtime.subscribe('*', onEvent);
      unsubscribes.push(off);
      return off;
    },
    addModelTokens(kind, count) {
      if (Number.isFinite(count) && count > 0) modelTokens.inc({ kind }, count);
    },
    countError(source, code) {
      errors.inc({ source, code });
    },
    observeHttp({ route, method, statusCode, seconds }) {
      const labels = { route, method, status_code: String(statusCode) };
      httpRequests.inc(labels);
      httpDuration.observe(labels, seconds);
    },
    observeHeld(seconds) {
      httpHeld.observe(seconds);
    },
    observeStoreHealth(event) {
      if (event.type === 'failed') storeFailures.inc({ kind: event.fault.kind });
      else if (event.type === 'fault') storeFaults.set({ kind: event.fault.kind }, 1);
      else for (const fault of event.faults) storeFaults.set({ kind: fault.kind }, 0);
    },
    close() {
      for (const off of unsubscribes.splice(0)) off();
    },
  };
  if (options.runtime) metrics.watch(options.runtime);
  return metrics;
}

/** Concurrent callers share one run (the gauges of one scrape share one set of counts). */
function shared<T>(run: () => Promise<T>): () => Promise<T> {
  let current: Promise<T> | null = null;
  return () =>
    (current ??= run().finally(() => {
      current = null;
    }));
}
