import { setMaxListeners } from 'node:events';
import type {
  ExecutionLimits,
  ExecutionRequest,
  ExecutionResult,
  HostCall,
  HostOutcome,
  LogEntry,
  SerializedError,
} from '../../spec/index.ts';
import { decodeValue, encodeOutcome } from '../../codec/index.ts';
import { failure } from '../../errors/index.ts';
import type { FromWorker } from './protocol.ts';
import type { SandboxWorker } from './sandbox-worker.ts';
import { callIdText } from './worker-replay.ts';
import { hostCallFailure } from '../host-failure.ts';

/** Grace after the deadline before a worker that does not answer is considered stuck and terminated. */
export const STUCK_WORKER_GRACE_MS = 2_000;

type Failure = SerializedError & { line?: number };

/** The abort reason tool signals see when their execution ends normally (one object: no stack per execution). */
const EXECUTION_ENDED = Object.freeze(new Error('the execution ended'));

/**
 * The main-thread half of one execution: serves the guest's host calls with bounded concurrency, delivers
 * outcomes in the order they settle, collects logs, and resolves exactly once.
 */
export class HostExecution {
  private readonly logs: LogEntry[] = [];
  /** Created with the first host call: most executions never need one. */
  private controllerOrNull: AbortController | null = null;
  private readonly queue: Extract<FromWorker, { type: 'call' }>[] = [];
  private running = 0;
  private overrideError: Failure | null = null;
  private resolved = false;
  private readonly startedAt = performance.now();
  private readonly backstop: NodeJS.Timeout;
  private readonly clock: () => number;

  constructor(
    readonly execId: number,
    readonly worker: SandboxWorker,
    readonly slot: number,
    private readonly request: ExecutionRequest,
    private readonly limits: ExecutionLimits,
    private readonly resolve: (result: ExecutionResult) => void,
    private readonly hooks: {
      /** The worker did not answer past the deadline. */
      onStuck(worker: SandboxWorker): void;
      /** Called after each delivery (the driver may poll for the guest's next message). */
      afterDeliver(worker: SandboxWorker): void;
    },
  ) {
    this.clock = request.clock ?? Date.now;
    this.backstop = setTimeout(() => {
      this.overrideError ??= failure('TIMEOUT', `the execution exceeded ${limits.timeoutMs} ms`);
      this.hooks.onStuck(worker);
    }, limits.timeoutMs + STUCK_WORKER_GRACE_MS);
    this.backstop.unref();
  }

  private get controller(): AbortController {
    if (!this.controllerOrNull) {
      this.controllerOrNull = new AbortController();
      // Every tool call and timer of the execution listens on this one signal.
      setMaxListeners(0, this.controllerOrNull.signal);
    }
    return this.controllerOrNull;
  }

  readClock(): number {
    return this.clock();
  }

  /** Interrupts the guest at once; the error reported is the one given here. */
  abort(error: Failure): void {
    if (this.resolved) return;
    this.overrideError ??= error;
    this.worker.interrupt(this.slot);
    this.worker.send({ type: 'abort', execId: this.execId, code: error.code, message: error.message });
    this.controller.abort(error);
  }

  onMessage(msg: Exclude<FromWorker, { type: 'ready' }>): void {
    switch (msg.type) {
      case 'call':
        // Timers are not tool calls: they never wait for a concurrency slot.
        if (msg.tool === -1) void this.serve(msg);
        else {
          this.queue.push(msg);
          this.pump();
        }
        break;
      case 'log': {
        const entry = { level: msg.level, message: msg.message };
        this.logs.push(entry);
        this.request.host.onLog?.(entry);
        break;
      }
      case 'replayDone':
        this.request.host.onReplayDone?.();
        break;
      case 'done':
        this.finish(msg);
        break;
    }
  }

  /** The worker died under this execution. */
  onWorkerLost(reason: string): void {
    this.complete({
      status: 'failed',
      error: this.overrideError ?? failure('SANDBOX_CRASHED', reason),
      memoryBytes: 0,
      toolCalls: 0,
    });
  }

  private pump(): void {
    while (this.running < this.limits.maxConcurrentToolCalls && !this.resolved) {
      const msg = this.queue.shift();
      if (!msg) return;
      this.running += 1;
      void this.serve(msg).finally(() => {
        this.running -= 1;
        this.pump();
      });
    }
  }

  private async serve(msg: Extract<FromWorker, { type: 'call' }>): Promise<void> {
    const callId = callIdText(msg.callId);
    let outcome: HostOutcome;
    try {
      let call: HostCall;
      const binding = this.request.tools[msg.tool];
      if (msg.tool === -1) {
        call = { kind: 'timer', callId, delayMs: Number(JSON.parse(msg.payload)) };
      } else if (binding) {
        const args = decodeValue(msg.payload);
        call = {
          kind: 'tool',
          callId,
          namespace: binding.namespace,
          name: binding.name,
          args,
          argsJson: msg.payload,
        };
      } else {
        throw new Error(`the guest called unknown tool index ${msg.tool}`);
      }
      outcome = await this.request.host.call(call, this.controller.signal);
    } catch (thrown) {
      outcome = hostCallFailure(thrown);
    }
    if (this.resolved) return;
    const { ok, payload } = encodeOutcome(outcome, this.toolName(msg.tool));
    this.worker.send({
      type: 'deliver',
      execId: this.execId,
      callId: msg.callId,
      ok,
      payload,
      clockMs: outcome.clock ?? this.clock(),
    });
    this.hooks.afterDeliver(this.worker);
  }

  private toolName(index: number): string {
    const b = this.request.tools[index];
    return b ? `${b.namespace}.${b.name}` : 'a timer';
  }

  private finish(msg: Extract<FromWorker, { type: 'done' }>): void {
    if (msg.ok && !this.overrideError) {
      let value: unknown;
      try {
        value = decodeValue(msg.payload);
      } catch (e) {
        this.complete({
          status: 'failed',
          error: failure('RESULT_INVALID', (e as Error).message),
          ...msg.resources,
        });
        return;
      }
      this.complete({ status: 'succeeded', value, ...msg.resources });
      return;
    }
    const error = this.overrideError ?? msg.error ?? failure('INTERNAL', 'the execution failed');
    this.complete({ status: 'failed', error, ...msg.resources });
  }

  private complete(
    outcome: ({ status: 'succeeded'; value: unknown } | { status: 'failed'; error: Failure }) & {
      memoryBytes: number;
      toolCalls: number;
      cpuMs?: number;
    },
  ): void {
    if (this.resolved) return;
    this.resolved = true;
    clearTimeout(this.backstop);
    const controller = this.controllerOrNull;
    if (controller && !controller.signal.aborted) controller.abort(EXECUTION_ENDED);
    const resources = {
      wallMs: performance.now() - this.startedAt,
      toolCalls: outcome.toolCalls,
      memoryBytes: outcome.memoryBytes,
      ...(outcome.cpuMs === undefined ? {} : { cpuMs: outcome.cpuMs }),
    };
    const logs = this.logs;
    if (outcome.status === 'succeeded')
      this.resolve({ status: 'succeeded', value: outcome.value, logs, resources });
    else this.resolve({ status: 'failed', error: outcome.error, logs, resources });
  }
}
