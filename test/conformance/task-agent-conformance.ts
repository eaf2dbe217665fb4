// What every TaskAgent (the hook through which the runner runs instruction tasks) must do: answer through the
// run's context, journal before it acts, run programs only through runProgram, go on from its journal without
// asking the model again, and end promptly with the abort reason's code. The runner's side is faked here: the
// journal is an array, and runProgram answers what the case says without a sandbox.
import { afterEach, describe, expect, it } from 'vitest';
import { CodecallError } from '../../src/errors/index.ts';
import type { ProgramRun, TaskAgent } from '../../src/spec/index.ts';
import type {
  ExecutionResult,
  InstructionTaskInput,
  JournalEntry,
  JournalEntryInput,
  TaskRecord,
} from '../../src/spec/index.ts';

/** What the agent's model is to do in a case, in order; the factory scripts it. */
export interface AgentScript {
  /** A program to run first (once, in the task's language), its result to be read before answering. */
  readonly program?: string;
  /** The final answer, a text. */
  readonly answer?: string;
  /** The model never answers (cases that abort the run while it waits). */
  readonly hang?: boolean;
}

export interface AgentUnderTest {
  readonly agent: TaskAgent;
  /** Requests the agent's model has received. */
  readonly modelRequests: () => number;
  readonly close?: () => Promise<void>;
}

const T0 = Date.UTC(2026, 0, 1);
const TASK_ID = 'task_agent_conformance';

const input: InstructionTaskInput = {
  kind: 'instruction',
  instruction: 'What is six times seven?',
  mode: 'code',
  maxSteps: 5,
  maxStepRetries: 2,
  language: 'javascript',
  seed: 7,
};

const task: TaskRecord & { readonly input: InstructionTaskInput } = {
  id: TASK_ID,
  batchId: null,
  tenant: 'default',
  sessionId: null,
  priority: 0,
  callbackUrl: null,
  maxRetries: 0,
  deadlineAt: null,
  retries: 0,
  runAfter: null,
  status: 'running',
  pauseReason: null,
  input,
  result: null,
  error: null,
  executionLog: null,
  resources: null,
  requestedAction: null,
  wakeAt: null,
  attempts: 1,
  version: 1,
  createdAt: new Date(T0).toISOString(),
  updatedAt: new Date(T0).toISOString(),
};

const TASK_INPUT: JournalEntryInput = {
  type: 'task_input',
  data: { code_hash: 'h', tools_hash: 'h', language: input.language, seed: input.seed },
};

function succeeded(value: unknown): ExecutionResult {
  return { status: 'succeeded', value, logs: [], resources: { wallMs: 1, toolCalls: 0, memoryBytes: 0 } };
}

interface Run {
  readonly result: ExecutionResult;
  /** What the agent appended, in order. */
  readonly appended: readonly JournalEntryInput[];
  /** The programs it ran, with the journal length when each started. */
  readonly programs: readonly (ProgramRun & { readonly journalLength: number })[];
}

/** One run of the agent over `journal` (entries without seq; the task_input entry comes first). */
async function runAgent(
  agent: TaskAgent,
  options: {
    journal?: readonly JournalEntryInput[];
    signal?: AbortSignal;
    program?: (run: ProgramRun) => ExecutionResult;
  } = {},
): Promise<Run> {
  const journal: JournalEntry[] = [TASK_INPUT, ...(options.journal ?? [])].map((entry, i) => ({
    ...entry,
    taskId: TASK_ID,
    seq: i + 1,
    checksum: `c${i + 1}`,
    createdAt: new Date(T0).toISOString(),
  }));
  const appended: JournalEntryInput[] = [];
  const programs: (ProgramRun & { journalLength: number })[] = [];
  let settled = false;
  const append = (entries: readonly JournalEntryInput[]): Promise<void> => {
    if (settled) throw new Error('the agent appended after its run resolved');
    for (const entry of entries) {
      expect(typeof entry.type).toBe('string');
      expect(entry.data).toBeTypeOf('object');
      // What is journaled is JSON: it survives a store's round trip as it is.
      expect(JSON.parse(JSON.stringify(entry))).toEqual(entry);
    }
    appended.push(...entries);
    return Promise.resolve();
  };
  const result = await agent.run({
    task,
    journal,
    append,
    runProgram: (run) => {
      programs.push({ ...run, journalLength: appended.length });
      return Promise.resolve((options.program ?? (() => succeeded(42)))(run));
    },
    signal: options.signal ?? new AbortController().signal,
    clock: () => T0,
  });
  settled = true;
  return { result, appended, programs };
}

function answerOf(result: ExecutionResult): unknown {
  if (result.status !== 'succeeded')
    throw new Error(`expected an answer, got ${JSON.stringify(result.error)}`);
  return result.value;
}

function codeOf(result: ExecutionResult): string {
  if (result.status !== 'failed') throw new Error(`expected a failure, got ${JSON.stringify(result.value)}`);
  return result.error.code;
}

/** The behaviour every TaskAgent must show; each case gets a fresh agent scripted as the case says. */
export function describeTaskAgentConformance(
  name: string,
  createAgent: (script: AgentScript) => Promise<AgentUnderTest>,
): void {
  describe(`${name} task agent conformance`, () => {
    const open: AgentUnderTest[] = [];
    const agentFor = async (script: AgentScript): Promise<AgentUnderTest> => {
      const made = await createAgent(script);
      open.push(made);
      return made;
    };
    afterEach(async () => {
      for (const made of open.splice(0)) await made.close?.();
    });

    it('answers with the model’s answer, journaled before the run resolves', async () => {
      const { agent, modelRequests } = await agentFor({ answer: 'Forty-two.' });
      const run = await runAgent(agent);
      expect(answerOf(run.result)).toBe('Forty-two.');
      expect(run.appended.length).toBeGreaterThan(0);
      expect(run.programs).toEqual([]);
      expect(modelRequests()).toBe(1);
    });

    it("runs its program through runProgram, in the task's language under the task's keys, then answers", async () => {
      const { agent, modelRequests } = await agentFor({ program: 'return 6 * 7', answer: 'It is 42.' });
      const run = await runAgent(agent);
      expect(answerOf(run.result)).toBe('It is 42.');
      expect(run.programs.length).toBeGreaterThan(0);
      const [first] = run.programs;
      expect(first?.code).toContain('6 * 7');
      expect(run.programs.every((p) => p.language === input.language)).toBe(true);
      expect(run.programs.every((p) => p.keyPrefix.startsWith(`${TASK_ID}:`))).toBe(true);
      // The model's reply was journaled before its program ran.
      expect(first?.journalLength).toBeGreaterThan(0);
      expect(modelRequests()).toBe(2);
    });

    it('goes on from its journal: a run after the program was journaled does not ask for it again', async () => {
      const first = await agentFor({ program: 'return 6 * 7', answer: 'It is 42.' });
      const whole = await runAgent(first.agent);
      const cut = whole.programs[0]?.journalLength ?? 0;
      // The process died as the program started: the next run has the journal up to there.
      const second = await agentFor({ answer: 'It is 42.' });
      const resumed = await runAgent(second.agent, { journal: whole.appended.slice(0, cut) });
      expect(answerOf(resumed.result)).toBe('It is 42.');
      expect(resumed.programs[0]?.code).toContain('6 * 7');
      expect(second.modelRequests()).toBe(1);
    });

    it('a run over a finished journal gives the same answer without asking the model', async () => {
      const first = await agentFor({ program: 'return 6 * 7', answer: 'It is 42.' });
      const whole = await runAgent(first.agent);
      const second = await agentFor({});
      const again = await runAgent(second.agent, { journal: whole.appended });
      expect(answerOf(again.result)).toBe('It is 42.');
      expect(second.modelRequests()).toBe(0);
    });

    it('ends the run with a pause its program ran into, without feeding it to the model', async () => {
      const { agent, modelRequests } = await agentFor({ program: 'return 6 * 7', answer: 'never asked' });
      const run = await runAgent(agent, {
        program: () => ({
          status: 'failed',
          error: { code: 'APPROVAL_REQUIRED', message: 'tools.send needs approval' },
          logs: [],
          resources: { wallMs: 1, toolCalls: 1, memoryBytes: 0 },
        }),
      });
      expect(codeOf(run.result)).toBe('APPROVAL_REQUIRED');
      expect(modelRequests()).toBe(1);
    });

    it("ends promptly with the abort reason's code while it waits for the model", async () => {
      const made = await agentFor({ hang: true });
      const controller = new AbortController();
      const running = runAgent(made.agent, { signal: controller.signal });
      await until(() => made.modelRequests() > 0);
      const started = performance.now();
      controller.abort(new CodecallError('PAUSED', 'paused by request'));
      const run = await running;
      expect(codeOf(run.result)).toBe('PAUSED');
      expect(performance.now() - started).toBeLessThan(5_000);
    });

    it('ends at once with the reason of a signal aborted before it starts, asking nothing', async () => {
      const made = await agentFor({ answer: 'never asked' });
      const run = await runAgent(made.agent, {
        signal: AbortSignal.abort(new CodecallError('SHUTDOWN', 'paused for shutdown')),
      });
      expect(codeOf(run.result)).toBe('SHUTDOWN');
      expect(run.programs).toEqual([]);
    });
  });
}

async function until(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
