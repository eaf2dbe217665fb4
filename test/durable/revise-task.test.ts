import { describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/durable/index.ts';
import { ToolRegistry } from '../../src/internal.ts';
import type { CodeTaskInput } from '../../src/internal.ts';
import { useDurableFixture } from './fixture.ts';

// runtime.revise (issue 18): the new task is the ended task's submission with its code replaced, checked by the
// submission's own path; what it copies, what it does not (the deadline), and what it refuses.

describe('runtime.revise', () => {
  const fx = useDurableFixture('revise-task');

  it("copies the task's settings and attributes, not its deadline, and names what it revises", async () => {
    const runtime = createRuntime({ store: fx.store, drivers: [fx.driver], tools: new ToolRegistry([]) });
    const files = [{ name: 'in.txt', data: Buffer.from('hi').toString('base64') }];
    const source = await runtime.submit({
      code: 'return 1',
      seed: 42,
      limits: { timeoutMs: 5000 },
      tools: ['tools.pay'],
      metadata: { ticket: 'T-1' },
      files,
      tenant: 't1',
      sessionId: 's1',
      priority: 7,
      callbackUrl: 'https://example.com/hook',
      maxRetries: 2,
      deadlineAt: Date.now() + 60_000,
    });
    await runtime.cancel(source.task_id);
    const view = await runtime.revise(
      source.task_id,
      { code: 'return 2', rerunReads: true },
      { actor: 'alice' },
    );
    expect(view).toMatchObject({
      status: 'pending',
      code: 'return 2',
      tenant: 't1',
      session_id: 's1',
      priority: 7,
      callback_url: 'https://example.com/hook',
      max_retries: 2,
      deadline: null,
      metadata: { ticket: 'T-1' },
      revision: { revision_of: source.task_id, rerun_reads: true, offered: 0, carried: 0, not_repeated: [] },
    });
    const record = await fx.store.getTask(view.task_id);
    expect(record?.input).toEqual({
      kind: 'code',
      code: 'return 2',
      language: 'javascript',
      seed: 42,
      limits: { timeoutMs: 5000 },
      tools: ['tools.pay'],
      metadata: { ticket: 'T-1' },
      files,
      revisionOf: source.task_id,
      rerunReads: true,
    } satisfies CodeTaskInput);
    await runtime.close();
  });

  it("metadata given with the revision replaces those keys of the revised task's (the CLI's --tools)", async () => {
    const runtime = createRuntime({ store: fx.store, drivers: [fx.driver], tools: new ToolRegistry([]) });
    const source = await runtime.submit({
      code: 'return 1',
      metadata: { ticket: 'T-1', codecall_tools_module: '/a/tools.ts' },
    });
    await runtime.cancel(source.task_id);
    const view = await runtime.revise(source.task_id, {
      code: 'return 2',
      metadata: { codecall_tools_module: '/b/tools.ts' },
    });
    expect(view.metadata).toEqual({ ticket: 'T-1', codecall_tools_module: '/b/tools.ts' });
    await expect(
      runtime.revise(source.task_id, { code: 'return 3', metadata: { big: 'x'.repeat(1 << 20) } }),
    ).rejects.toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    await runtime.close();
  });

  it('refuses a task that has not ended, an unknown one, and what a submission could not ask for', async () => {
    const runtime = createRuntime({
      store: fx.store,
      drivers: [fx.driver],
      tools: new ToolRegistry([]),
      ceilings: { maxTimeoutSeconds: 1 },
    });
    const pending = await runtime.submit({ code: 'return 1' });
    await expect(runtime.revise(pending.task_id, { code: 'return 2' })).rejects.toMatchObject({
      code: 'ILLEGAL_TRANSITION',
      details: { status: 'pending' },
    });
    await expect(runtime.revise('task_nope', { code: 'return 2' })).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
    await runtime.cancel(pending.task_id);
    await expect(runtime.revise(pending.task_id, { code: '' })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      details: { field: 'code' },
    });
    // Its limits were fine when it was submitted; the ceiling now is lower: the revision is refused.
    const big = await fx.store.createTask({
      kind: 'code',
      code: 'x',
      language: 'javascript',
      seed: 1,
      limits: { timeoutMs: 5000 },
    });
    await runtime.cancel(big.id);
    await expect(runtime.revise(big.id, { code: 'return 2' })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      details: { field: 'tool_constraints.timeout_seconds' },
    });
    await runtime.close();
  });
});
