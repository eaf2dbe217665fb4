import { decodeValue, encodeOutcome } from '../../codec/index.ts';
import { failure } from '../../errors/index.ts';
import type {
  ExecutionLimits,
  ExecutionRequest,
  ExecutionResult,
  HostCall,
  HostOutcome,
  LogEntry,
  LogLevel,
  WorkspaceFile,
} from '../../spec/index.ts';
import { abortFailure } from '../early-failure.ts';
import { hostCallFailure } from '../host-failure.ts';
import { cpuBudgetMs } from '../limits.ts';
import type { PythonProcess } from './python-process.ts';
import { sandboxCpuMs, watchSandbox } from './watchdog.ts';
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
  protocol,
} from './execution-terms.ts';
import type { Failure, GuestMessage } from './execution-terms.ts';

/**
 * Runs one program on a started interpreter: sends it the program, serves its tool calls (bounded concurrency,
 * outcomes delivered in the order they settle), enforces the wall-clock, output, call and result limits, and
 * resolves once with the result. The interpreter is used once and killed.
 */
export function runOnProcess(
  proc: PythonProcess,
  request: ExecutionRequest,
  limits: ExecutionLimits,
  options: { signal?: AbortSignal; execFilter: Buffer },
): Promise<ExecutionResult> {
  const signal = options.signal;
  const started = performance.now();
  const clock = request.clock ?? Date.now;
  const logs: LogEntry[] = [];
  const controller = new AbortController();
  let outputBytes = 0;
  let toolCalls = 0;
  let running = 0;
  const queue: { call: HostCall; id: string; size: number }[] = [];
  /** Bytes of arguments of the calls queued or running: the host holds them for the program. */
  let heldArgs = 0;
  let override: Failure | null = null;
  let done = false;
  let replayAnnounced = false;
  return new Promise<ExecutionResult>((resolve) => {
    type Outcome = { status: 'succeeded'; value: unknown } | { status: 'failed'; error: Failure };
    let artifacts: WorkspaceFile[] = [];
    const finish = (result: Outcome, usage: GuestMessage['resources'] = {}) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      unwatch();
      signal?.removeEventListener('abort', onAbort);
      controller.abort(new Error('the execution ended'));
      proc.kill();
      const resources = {
        wallMs: performance.now() - started,
        toolCalls,
        memoryBytes: typeof usage.memoryBytes === 'number' ? usage.memoryBytes : 0,
        ...(typeof usage.cpuMs === 'number' ? { cpuMs: usage.cpuMs } : {}),
      };
      resolve({ ...result, logs, resources, ...(artifacts.length > 0 ? { artifacts } : {}) });
    };
    const fail = (error: Failure, usage?: GuestMessage['resources']) =>
      finish({ status: 'failed', error: override ?? error }, usage);
    const end = (error: Failure) => {
      override ??= error;
      proc.kill();
    };
    // What rlimits cannot bound (memory and CPU across processes, memfds, the workspace's total): the host
    // watches it, from the program's start (the interpreter's own start is not the program's CPU time).
    const pid = proc.pid;
    let unwatch = () => undefined as void;
    const watch = async () => {
      if (pid === undefined) return;
      const cpuBaselineMs = await sandboxCpuMs(pid);
      if (done) return;
      unwatch = watchSandbox(
        pid,
        {
          memoryBytes: limits.memoryBytes + PROCESS_MEMORY_ALLOWANCE,
          workspaceBytes: DEFAULT_MAX_WORKSPACE_BYTES,
          workspaceEntries: DEFAULT_MAX_WORKSPACE_ENTRIES,
          cpuMs: cpuBudgetMs(limits),
          cpuBaselineMs,
        },
        (breach) => end(failure(breach.code, breach.message)),
      );
    };
    const timer = setTimeout(
      () => end(failure('TIMEOUT', `the execution exceeded ${limits.timeoutMs} ms`)),
      limits.timeoutMs,
    );
    const onAbort = () => end(abortFailure(signal?.reason));
    if (signal?.aborted) onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });

    const log = (level: LogLevel, message: string) => {
      outputBytes += Buffer.byteLength(message) + 1;
      if (outputBytes > limits.outputBytes) {
        end(failure('OUTPUT_LIMIT', `the program printed more than ${limits.outputBytes} bytes`));
        return;
      }
      const entry = { level, message };
      logs.push(entry);
      request.host.onLog?.(entry);
    };
    proc.onRawOutput((level, text) => {
      for (const line of text.split('\n')) if (line !== '') log(level, line);
    });

    const pump = () => {
      while (running < limits.maxConcurrentToolCalls && !done) {
        const next = queue.shift();
        if (!next) return;
        running += 1;
        void serve(next.call, next.id).finally(() => {
          running -= 1;
          heldArgs -= next.size;
          pump();
        });
      }
    };
    const serve = async (call: HostCall, id: string) => {
      let outcome: HostOutcome;
      try {
        outcome = await request.host.call(call, controller.signal);
      } catch (thrown) {
        outcome = hostCallFailure(thrown);
      }
      if (done) return;
      const tool = call.kind === 'tool' ? `${call.namespace}.${call.name}` : 'a timer';
      const { ok, payload } = encodeOutcome(outcome, tool);
      proc.send({ t: 'outcome', id, ok, payload, clock: outcome.clock ?? clock() });
      if (proc.unsentBytes > MAX_HELD_BYTES) {
        // A program that does not read its outcomes would have them pile up in the host's memory.
        end(
          failure(
            'MEMORY_LIMIT',
            `the program left more than ${MAX_HELD_BYTES} bytes of tool outcomes unread`,
          ),
        );
      }
    };

    const onMessage = (raw: unknown) => {
      if (done || override) return;
      const msg = raw as GuestMessage;
      switch (msg.t) {
        case 'log':
          if (typeof msg.message === 'string') {
            log(
              typeof msg.level === 'string' && LEVELS.has(msg.level) ? (msg.level as LogLevel) : 'log',
              msg.message,
            );
          }
          return;
        case 'replayDone':
          // Only an execution with a script has a replay to end, and it ends once.
          if (request.replay && !replayAnnounced) {
            replayAnnounced = true;
            request.host.onReplayDone?.();
          }
          return;
        case 'scripted':
        case 'call':
        case 'timer': {
          if (typeof msg.id !== 'string') return end(protocol('a call without an id'));
          toolCalls += 1;
          if (toolCalls > limits.maxToolCalls) {
            return end(
              failure('TOOL_CALL_LIMIT', `the program made more than ${limits.maxToolCalls} tool calls`),
            );
          }
          // Answered from the replay script inside the sandbox: counted, nothing runs.
          if (msg.t === 'scripted') return;
          if (msg.t === 'timer') {
            const delayMs = typeof msg.ms === 'number' && Number.isFinite(msg.ms) ? Math.max(0, msg.ms) : 0;
            void serve({ kind: 'timer', callId: msg.id, delayMs }, msg.id);
            return;
          }
          const binding = request.tools.find((b) => b.namespace === msg.ns && b.name === msg.name);
          if (!binding || typeof msg.args !== 'string') return end(protocol(`a call of an unknown tool`));
          // Checked before decoding: the host would hold them (and their decoded copy) for the program.
          const size = msg.args.length;
          if (heldArgs + size > MAX_HELD_BYTES) {
            const held = `the program's waiting tool calls hold more than ${MAX_HELD_BYTES} bytes of arguments`;
            return end(failure('MEMORY_LIMIT', held));
          }
          let args: unknown;
          try {
            args = decodeValue(msg.args);
          } catch {
            return end(protocol('tool arguments that are not tagged JSON'));
          }
          const call: HostCall = {
            kind: 'tool',
            callId: msg.id,
            namespace: binding.namespace,
            name: binding.name,
            args,
            argsJson: msg.args,
          };
          heldArgs += size;
          queue.push({ call, id: msg.id, size });
          pump();
          return;
        }
        case 'done': {
          artifacts = artifactsOf(msg.artifacts);
          if (msg.ok === true && typeof msg.value === 'string') {
            if (Buffer.byteLength(msg.value) > limits.resultBytes) {
              return fail(
                failure('RESULT_LIMIT', `the result is larger than ${limits.resultBytes} bytes`),
                msg.resources,
              );
            }
            try {
              return finish({ status: 'succeeded', value: decodeValue(msg.value) }, msg.resources);
            } catch (e) {
              return fail(failure('RESULT_INVALID', (e as Error).message), msg.resources);
            }
          }
          const e = msg.error ?? {};
          return fail(
            {
              code: typeof e.code === 'string' ? e.code : 'GUEST_ERROR',
              name: typeof e.name === 'string' ? e.name : 'Error',
              message: typeof e.message === 'string' ? e.message : 'the program failed',
              ...(typeof e.line === 'number' ? { line: e.line } : {}),
            },
            msg.resources,
          );
        }
        default:
          return end(protocol('an unknown message'));
      }
    };
    proc.onMessage(onMessage);
    void proc.exited.then(async (exit) => {
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
      code: request.code,
      policy: request.policy ?? {},
      files: (request.files ?? []).map((f) => ({
        name: f.name,
        data: Buffer.from(f.data).toString('base64'),
      })),
      execFilter: options.execFilter.toString('base64'),
      seed: request.seed ?? 0,
      // Checked by the driver (replay-steps.ts); the guest serves it (guest-host-calls.ts).
      ...(request.replay ? { replay: request.replay } : {}),
      clock: clock(),
      tools: request.tools.map((b) => ({
        namespace: b.namespace,
        name: b.name,
        ...(b.params ? { params: b.params } : {}),
      })),
      limits: {
        memoryBytes: limits.memoryBytes,
        // Per process, from the program's start: a backstop past the watchdog's budget for all of them.
        cpuSeconds: Math.ceil(cpuBudgetMs(limits) / 1000) + 1,
        fileBytes: DEFAULT_MAX_FILE_BYTES,
        processes: DEFAULT_MAX_PROCESSES,
        files: DEFAULT_MAX_OPEN_FILES,
      },
    };
    // The cgroup's limit becomes this execution's: the program's memory, the interpreter and its libraries, and
    // the tmpfs mounts (charged to the group as they fill). It counts what rlimits cannot (shared memory, memfds).
    // The watch starts with the program: its CPU baseline is read meanwhile (a millisecond of the program's own
    // CPU may fall into it; waiting for it cost every warm execution as much).
    void watch().catch(() => undefined);
    void proc
      .limitMemory(limits.memoryBytes + CGROUP_ALLOWANCE_BYTES)
      .catch(() => false)
      .then(() => {
        if (!done) proc.send(start);
      });
  });
}
