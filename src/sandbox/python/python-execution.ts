import { decodeValue } from '../../codec/index.ts';
import { CodecallError, failure } from '../../errors/index.ts';
import type {
  ExecutionLimits,
  ExecutionRequest,
  ExecutionResult,
  HostCall,
  LogLevel,
  WorkspaceFile,
} from '../../spec/index.ts';
import { CallPump } from '../call-pump.ts';
import type { GuestEnd, GuestUsage } from '../call-pump.ts';
import { abortFailure } from '../early-failure.ts';
import { unfence } from '../fenced-program.ts';
import { guestFailure } from '../guest-failure.ts';
import { cpuBudgetMs, EGRESS_NAMESPACE, formatCallId } from '../../spec/index.ts';
import type { PythonProcess } from './python-process.ts';
import { sandboxUsage, watchSandbox } from './watchdog.ts';
import {
  artifactsOf,
  CGROUP_ALLOWANCE_BYTES,
  DEFAULT_MAX_FILE_BYTES,
  DEFAULT_MAX_OPEN_FILES,
  DEFAULT_MAX_PROCESSES,
  DEFAULT_MAX_WORKSPACE_BYTES,
  DEFAULT_MAX_WORKSPACE_ENTRIES,
  exitFailure,
  LEVELS,
  MAX_HELD_BYTES,
  PROCESS_MEMORY_ALLOWANCE,
  violation,
  describeId,
} from './execution-terms.ts';
import type { Failure, GuestMessage } from './execution-terms.ts';

/**
 * Runs one program on a started interpreter: sends it the program, reads its messages for the call pump
 * (call-pump.ts: bounded concurrency, outcomes in the order they settle, the wall-clock, call and output limits),
 * checks what the untrusted guest sends (its calls, the bytes it has the host hold, its result) and resolves once
 * with the result. The interpreter is used once and killed.
 */
export function runOnProcess(
  proc: PythonProcess,
  request: ExecutionRequest,
  limits: ExecutionLimits,
  options: { signal?: AbortSignal; execFilter: Buffer },
): Promise<ExecutionResult> {
  const signal = options.signal;
  /** Bytes of arguments of the calls queued or running: the host holds them for the program. */
  let heldArgs = 0;
  /** Calls the guest issued (scripted ones included): the next must be `call-(issued + 1)`. */
  let issued = 0;
  let unwatch = () => undefined as void;
  /** The egress requests queued or under way, by call id: the program may give up on one (asyncio cancel). */
  const cancels = new Map<string, AbortController>();
  return new Promise<ExecutionResult>((resolve) => {
    const onAbort = () => pump.kill(abortFailure(signal?.reason));
    // A call is its HostCall: the guest's id is the call's id, its arguments' wire text the call's argsJson.
    const pump: CallPump<HostCall> = new CallPump<HostCall>({
      request,
      limits,
      graceMs: 0,
      hostLimits: true,
      transport: {
        hostCall: (call) => call,
        deliver: (call, ok, payload, clockMs) => {
          if (cancels.size > 0) cancels.delete(call.callId);
          proc.send({ t: 'outcome', id: call.callId, ok, payload, clock: clockMs });
          if (call.kind === 'tool') heldArgs -= call.argsJson?.length ?? 0;
          if (proc.unsentBytes > MAX_HELD_BYTES) {
            // A program that does not read its outcomes would have them pile up in the host's memory.
            pump.kill(
              failure(
                'MEMORY_LIMIT',
                `the program left more than ${MAX_HELD_BYTES} bytes of tool outcomes unread`,
              ),
            );
          }
        },
        kill: () => proc.kill(),
      },
      onEnd: (result) => {
        unwatch();
        signal?.removeEventListener('abort', onAbort);
        // A fork server's execution that ended with its result is ended by the server (recycle); any other end
        // kills the whole sandbox, as every end did before.
        if (!(viaDone && proc.reusable)) proc.kill();
        resolve(result);
      },
    });
    const fail = (error: Failure) => pump.finish({ status: 'failed', error });
    /** The end came with the guest's done message (the only end after which a fork server is reused). */
    let viaDone = false;
    // The CPU time of the interpreter's start-up, read as the start message goes out.
    let cpuBaselineMs: number | undefined;
    // What the sandbox used, as the host reads it off the kernel (the guest's own report is not believed).
    const measured = (): GuestUsage => {
      if (pid === undefined) return { memoryBytes: 0 };
      const usage = sandboxUsage(pid, { ownRoot });
      return cpuBaselineMs === undefined
        ? { memoryBytes: usage.peakBytes }
        : { memoryBytes: usage.peakBytes, cpuMs: Math.max(0, usage.cpuMs - cpuBaselineMs) };
    };
    const end = (guest: GuestEnd, artifacts: WorkspaceFile[]) => {
      viaDone = true;
      pump.finish(guest, measured(), artifacts);
    };
    // bwrap's tree, or a fork server's execution process (pid 1 of its own namespaces) and its tree.
    const { pid, own: ownRoot } = proc.programRoot;
    // What rlimits cannot bound (memory and CPU across processes, memfds, the workspace's total): the host
    // watches it from the program's start, with the interpreter's own start as the CPU baseline.
    const watch = (baselineMs: number) => {
      if (pid === undefined) return;
      unwatch = watchSandbox(
        pid,
        {
          memoryBytes: limits.memoryBytes + PROCESS_MEMORY_ALLOWANCE,
          workspaceBytes: DEFAULT_MAX_WORKSPACE_BYTES,
          workspaceEntries: DEFAULT_MAX_WORKSPACE_ENTRIES,
          cpuMs: cpuBudgetMs(limits),
          cpuBaselineMs: baselineMs,
        },
        (breach) => pump.kill(failure(breach.code, breach.message)),
        { ownRoot },
      );
    };
    if (signal?.aborted) onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });

    // Writes under print (os.write to fds 1 and 2): every line is an entry, an empty one too, so each byte counts.
    proc.onRawOutput((level, text) => {
      const lines = text.split('\n');
      if (lines.at(-1) === '') lines.pop();
      for (const line of lines) {
        if (pump.stopping) return;
        pump.log(level, line);
      }
    });

    const onMessage = (raw: unknown) => {
      if (pump.stopping) return;
      const msg = raw as GuestMessage;
      switch (msg.t) {
        case 'log':
          if (typeof msg.message === 'string') {
            pump.log(
              typeof msg.level === 'string' && LEVELS.has(msg.level) ? (msg.level as LogLevel) : 'log',
              msg.message,
            );
          }
          return;
        case 'replayDone':
          pump.replayDone();
          return;
        case 'cancel': {
          // A request under way is aborted; one waiting for a slot goes to the host at once, aborted (journaled
          // ABORTED, no request made). Any other id (a tool's call, a scripted one, one answered) is ignored.
          const controller = typeof msg.id === 'string' ? cancels.get(msg.id) : undefined;
          if (controller === undefined) return;
          controller.abort(new CodecallError('ABORTED', 'fetch: the program gave up on the request'));
          pump.cancelQueued((call) => call.callId === msg.id);
          return;
        }
        case 'scripted':
        case 'call':
        case 'timer': {
          // The host numbers the calls: the guest's id is a correlation token that must be the next number.
          const expected = formatCallId({ n: issued + 1 });
          if (msg.id !== expected) {
            return pump.kill(
              violation(
                `a call with the id ${describeId(msg.id)} where the next call is ${expected} (ids are the host's, in issue order)`,
              ),
            );
          }
          issued += 1;
          if (!pump.count()) return;
          // Answered from the replay script inside the sandbox: counted, nothing runs.
          if (msg.t === 'scripted') return;
          if (msg.t === 'timer') {
            const delayMs = typeof msg.ms === 'number' && Number.isFinite(msg.ms) ? Math.max(0, msg.ms) : 0;
            pump.timer({ kind: 'timer', callId: msg.id, delayMs });
            return;
          }
          const binding = request.tools.find((b) => b.namespace === msg.ns && b.name === msg.name);
          if (!binding || typeof msg.args !== 'string')
            return pump.kill(violation(`a call of an unknown tool`));
          // Over the call's bound they are neither decoded nor held: the host gets their size (ADR 0029).
          const bound = limits.toolArgumentBytes;
          if (bound !== undefined && msg.args.length > bound / 3) {
            const bytes = Buffer.byteLength(msg.args);
            if (bytes > bound) {
              pump.call({
                kind: 'tool',
                callId: msg.id,
                namespace: binding.namespace,
                name: binding.name,
                args: null,
                argsTooLarge: { bytes },
              });
              return;
            }
          }
          // Checked before decoding: the host would hold them (and their decoded copy) for the program.
          const size = msg.args.length;
          if (heldArgs + size > MAX_HELD_BYTES) {
            return pump.kill(
              failure(
                'MEMORY_LIMIT',
                `the program's waiting tool calls hold more than ${MAX_HELD_BYTES} bytes of arguments`,
              ),
            );
          }
          let args: unknown;
          try {
            args = decodeValue(msg.args);
          } catch {
            return pump.kill(violation('tool arguments that are not tagged JSON'));
          }
          heldArgs += size;
          // Only a request can be given up on; a body read or a tool call runs to its end.
          let cancelled: AbortSignal | undefined;
          if (binding.namespace === EGRESS_NAMESPACE && binding.name !== 'body') {
            const controller = new AbortController();
            cancels.set(msg.id, controller);
            cancelled = controller.signal;
          }
          pump.call({
            kind: 'tool',
            callId: msg.id,
            namespace: binding.namespace,
            name: binding.name,
            args,
            argsJson: msg.args,
            ...(cancelled ? { cancelled } : {}),
          });
          return;
        }
        case 'done': {
          const artifacts = artifactsOf(msg.artifacts);
          if (msg.ok === true && typeof msg.value === 'string') {
            if (Buffer.byteLength(msg.value) > limits.resultBytes) {
              const error = failure('RESULT_LIMIT', `the result is larger than ${limits.resultBytes} bytes`);
              return end({ status: 'failed', error }, artifacts);
            }
            let value: unknown;
            try {
              value = decodeValue(msg.value);
            } catch (e) {
              return end(
                { status: 'failed', error: failure('RESULT_INVALID', (e as Error).message) },
                artifacts,
              );
            }
            return end({ status: 'succeeded', value }, artifacts);
          }
          const e = msg.error ?? {};
          const error = guestFailure(
            e,
            typeof e.line === 'number' ? e.line : undefined,
            undefined,
            request.tools,
          );
          return end({ status: 'failed', error }, artifacts);
        }
        default:
          return pump.kill(violation('an unknown message'));
      }
    };
    proc.onMessage(onMessage);
    void proc.executionEnded.then(async (exit) => {
      const oom = await proc.oomKilled();
      // Let the last messages (written before the exit) arrive first.
      setImmediate(() =>
        fail(
          oom
            ? failure('MEMORY_LIMIT', 'the program used more memory than its sandbox has')
            : exitFailure(exit, proc.brokenProtocol),
        ),
      );
    });
    const start = {
      t: 'start',
      // A program that is one ```python block runs as its inside (its lines stay where they were).
      code: unfence(request.code, 'python'),
      policy: request.policy ?? {},
      files: (request.files ?? []).map((f) => ({
        name: f.name,
        data: Buffer.from(f.data).toString('base64'),
      })),
      execFilter: options.execFilter.toString('base64'),
      seed: request.seed ?? 0,
      // Checked by the driver (replay-steps.ts); the guest serves it (guest-host-calls.ts).
      ...(request.replay ? { replay: request.replay } : {}),
      clock: pump.readClock(),
      tools: request.tools.map((b) => ({
        namespace: b.namespace,
        name: b.name,
        ...(b.params ? { params: b.params } : {}),
      })),
      limits: {
        memoryBytes: limits.memoryBytes,
        // Only for a value no expression asked for (the last statement's): over it, that is None.
        resultBytes: limits.resultBytes,
        // Per process, from the program's start: a backstop past the watchdog's budget for all of them.
        cpuSeconds: Math.ceil(cpuBudgetMs(limits) / 1000) + 1,
        fileBytes: DEFAULT_MAX_FILE_BYTES,
        processes: DEFAULT_MAX_PROCESSES,
        files: DEFAULT_MAX_OPEN_FILES,
      },
    };
    // The cgroup's limit becomes this execution's: the program's memory, the interpreter and its libraries, and
    // the tmpfs mounts (charged to the group as they fill). It counts what rlimits cannot (shared memory, memfds).
    void proc
      .limitMemory(limits.memoryBytes + CGROUP_ALLOWANCE_BYTES)
      .catch(() => false)
      .then(() => {
        if (pump.ended) return;
        // The interpreter's start-up, not the program's: what the CPU limit and the report count from (a few
        // synchronous /proc reads, as the program starts).
        if (pid !== undefined) {
          cpuBaselineMs = sandboxUsage(pid, { ownRoot }).cpuMs;
          watch(cpuBaselineMs);
        }
        proc.send(start);
      });
  });
}
