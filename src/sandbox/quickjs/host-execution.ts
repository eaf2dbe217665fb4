import type { ExecutionLimits, ExecutionRequest, ExecutionResult, HostCall } from '../../spec/index.ts';
import { decodeValue } from '../../codec/index.ts';
import { CodecallError, failure } from '../../errors/index.ts';
import { CallPump } from '../call-pump.ts';
import type { GuestFailure, GuestTransport } from '../call-pump.ts';
import type { FromWorker, PausedImage } from './protocol.ts';
import type { SandboxWorker } from './sandbox-worker.ts';
import { SLOW_PROBE_EVERY } from './answer-wait.ts';
import { EGRESS_NAMESPACE, formatCallId } from '../../spec/index.ts';

/** Grace after the deadline before a worker that does not answer is considered stuck and terminated. */
export const STUCK_WORKER_GRACE_MS = 2_000;

type CallMessage = Extract<FromWorker, { type: 'call' }>;

/**
 * The main-thread half of one execution: reads the worker's messages for the call pump (call-pump.ts) and carries
 * its outcomes and aborts over the worker's port. The worker counts calls and output itself (replayed calls never
 * leave it), so the pump keeps no call or output limit here.
 */
export class HostExecution implements GuestTransport<CallMessage> {
  private readonly pump: CallPump<CallMessage>;
  /** When the last outcome was delivered (performance.now()), until the guest's next message; else -1. */
  private deliveredAt = -1;
  /**
   * Whether the guest's last message after a delivery came within the poll window. A guest that computes longer on
   * an answer (a fetch's response parsed) would only have the main thread spin on a core the guest needs, and
   * contend for the port the guest posts to. A gap not polled for includes the event loop's own wake-up, which can
   * alone exceed the window: so one delivery in SLOW_PROBE_EVERY is polled after anyway, and a guest that turned
   * quick is seen to.
   */
  private answersQuickly = true;
  private slowDeliveries = 0;
  /** The egress calls under way, by the guest's call number: the guest may give up on one (cancel). */
  private readonly cancels = new Map<number, AbortController>();
  /** Calls given up while they waited for a slot: their HostCall is built with its signal aborted. */
  private readonly givenUp = new Set<number>();
  /** The VM's image, when the worker kept it as the execution paused. */
  paused: PausedImage | undefined;

  constructor(
    readonly execId: number,
    readonly worker: SandboxWorker,
    readonly slot: number,
    private readonly request: ExecutionRequest,
    limits: ExecutionLimits,
    resolve: (result: ExecutionResult) => void,
    private readonly hooks: {
      /** The worker did not answer past the deadline. */
      onStuck(worker: SandboxWorker): void;
      /**
       * Called after a delivery when the guest's next message came within `quickAnswerMs` of the one before (the
       * driver may poll for it rather than sleep).
       */
      afterDeliver(worker: SandboxWorker): void;
      /** How soon after a delivery the guest's next message must come for the next delivery to be polled after. */
      readonly quickAnswerMs: number;
    },
  ) {
    this.pump = new CallPump({
      request,
      limits,
      transport: this,
      graceMs: STUCK_WORKER_GRACE_MS,
      hostLimits: false,
      onEnd: resolve,
    });
  }

  readClock(): number {
    return this.pump.readClock();
  }

  /** Interrupts the guest at once; the error reported is the one given here. */
  abort(error: GuestFailure): void {
    this.pump.interrupt(error);
  }

  onMessage(msg: Exclude<FromWorker, { type: 'ready' }>): void {
    if (this.deliveredAt >= 0) {
      this.answersQuickly = performance.now() - this.deliveredAt <= this.hooks.quickAnswerMs;
      this.deliveredAt = -1;
    }
    switch (msg.type) {
      case 'call':
        if (msg.tool === -1) this.pump.timer(msg);
        else this.pump.call(msg);
        break;
      case 'log':
        this.pump.log(msg.level, msg.message);
        break;
      case 'cancel':
        this.cancel(msg.callId);
        break;
      case 'replayDone':
        this.pump.replayDone();
        break;
      case 'done':
        this.finish(msg);
        break;
    }
  }

  /**
   * The guest gave up on an egress call: under way, its request is aborted; still waiting for a slot, it goes to
   * the host at once with its signal aborted, so the host journals it ABORTED and makes no request. A call the
   * replay script answered, or already answered, is none of these: nothing happens.
   */
  private cancel(callId: number): void {
    const reason = new CodecallError('ABORTED', 'fetch: the program aborted the request');
    const running = this.cancels.get(callId);
    if (running) {
      running.abort(reason);
      return;
    }
    this.givenUp.add(callId);
    if (!this.pump.cancelQueued((c) => c.callId === callId)) this.givenUp.delete(callId);
  }

  /** The worker died under this execution. */
  onWorkerLost(reason: string): void {
    this.pump.finish(
      { status: 'failed', error: failure('SANDBOX_CRASHED', reason) },
      { memoryBytes: 0, toolCalls: 0 },
    );
  }

  hostCall(msg: CallMessage): HostCall {
    const callId = formatCallId({ n: msg.callId });
    // A timer's payload is its delay.
    if (msg.tool === -1) return { kind: 'timer', callId, delayMs: Number(JSON.parse(msg.payload)) };
    const binding = this.request.tools[msg.tool];
    if (!binding) throw new Error(`the guest called unknown tool index ${msg.tool}`);
    const payload = msg.payload;
    let decoded: { readonly value: unknown } | undefined;
    if (msg.tooLarge) {
      const { bytes, sha256 } = msg.tooLarge;
      const argsTooLarge = { bytes: Number(bytes), sha256: String(sha256) };
      return {
        kind: 'tool',
        callId,
        namespace: binding.namespace,
        name: binding.name,
        args: null,
        argsTooLarge,
      };
    }
    // Only a request can be given up on (fetch's signal); a body read or a tool call runs to its end.
    let cancelled: AbortSignal | undefined;
    if (binding.namespace === EGRESS_NAMESPACE && binding.name !== 'body') {
      const controller = new AbortController();
      if (this.givenUp.delete(msg.callId)) {
        controller.abort(new CodecallError('ABORTED', 'fetch: the program aborted the request'));
      } else this.cancels.set(msg.callId, controller);
      cancelled = controller.signal;
    }
    return {
      kind: 'tool',
      callId,
      namespace: binding.namespace,
      name: binding.name,
      ...(cancelled ? { cancelled } : {}),
      // Decoded on first read, once: a host that refuses the call from its wire text alone (arguments over the
      // size bound) never parses them on the main thread.
      get args(): unknown {
        decoded ??= { value: decodeValue(payload) };
        return decoded.value;
      },
      argsJson: payload,
    };
  }

  deliver(msg: CallMessage, ok: boolean, payload: string, clockMs: number): void {
    if (this.cancels.size > 0) this.cancels.delete(msg.callId);
    this.worker.send({ type: 'deliver', execId: this.execId, callId: msg.callId, ok, payload, clockMs });
    this.deliveredAt = performance.now();
    if (this.answersQuickly || ++this.slowDeliveries % SLOW_PROBE_EVERY === 0)
      this.hooks.afterDeliver(this.worker);
  }

  interrupt(error: GuestFailure): void {
    this.worker.interrupt(this.slot);
    this.worker.send({ type: 'abort', execId: this.execId, code: error.code, message: error.message });
  }

  kill(): void {
    this.hooks.onStuck(this.worker);
  }

  private finish(msg: Extract<FromWorker, { type: 'done' }>): void {
    this.paused = msg.paused;
    if (msg.ok && !this.pump.stopping) {
      let value: unknown;
      try {
        value = decodeValue(msg.payload);
      } catch (e) {
        this.pump.finish(
          { status: 'failed', error: failure('RESULT_INVALID', (e as Error).message) },
          msg.resources,
        );
        return;
      }
      this.pump.finish({ status: 'succeeded', value }, msg.resources);
      return;
    }
    const error = msg.error ?? failure('INTERNAL', 'the execution failed');
    this.pump.finish({ status: 'failed', error }, msg.resources);
  }
}
