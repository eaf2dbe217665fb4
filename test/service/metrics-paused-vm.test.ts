import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/durable/index.ts';
import type { TaskRunner } from '../../src/durable/index.ts';
import { defineTool, ToolRegistry } from '../../src/internal.ts';
import { createMetrics } from '../../src/metrics/index.ts';
import type { Metrics } from '../../src/metrics/index.ts';
import { useDurableFixture } from '../durable/fixture.ts';
import type { Runtime } from '../../src/api/index.ts';

// ADR 0056 (amended 2026-12-07): a real runtime (SQLite file, quickjs) counts what each resume found of a kept
// paused VM in codecall_paused_vm_resumes_total, and a paused task that is cancelled keeps no VM.

const PROGRAM =
  'let s = 0; for (let i = 0; i < 5; i++) s += (await tools.echo({ i })).i; return await tools.pay({ s });';

function count(text: string, outcome: string): number {
  const line = text
    .split('\n')
    .find((l) => l.startsWith(`codecall_paused_vm_resumes_total{outcome="${outcome}"}`));
  return Number(line?.split(' ').at(-1) ?? NaN);
}

describe('paused VM metrics and ended tasks', () => {
  const fx = useDurableFixture('metrics-paused-vm');
  let metrics: Metrics;
  let runtime: Runtime;

  beforeAll(() => {
    metrics = createMetrics({ store: fx.store, processMetrics: false });
    runtime = createRuntime({
      store: fx.store,
      drivers: [fx.driver],
      tools: new ToolRegistry([
        defineTool({ name: 'echo', description: '', effect: 'read', execute: (a) => a }),
        defineTool({
          name: 'pay',
          description: '',
          effect: 'unsafe',
          requiresApproval: true,
          execute: () => 'paid',
        }),
      ]),
      pollMs: 20,
      observer: metrics.runtimeObserver,
    });
  });
  afterAll(async () => {
    await runtime.close();
    metrics.close();
  });

  // The runtime's runner is private; its kept VMs are what this checks.
  const kept = (): number => (runtime as unknown as { runner: TaskRunner }).runner.pausedVms?.size ?? -1;

  async function pausedTask(): Promise<{ id: string; approvalId: string }> {
    const view = await runtime.submit({ code: PROGRAM });
    const paused = await runtime.run(view.task_id);
    expect(paused).toMatchObject({ status: 'paused', pause_reason: 'approval_required' });
    const [req] = (await fx.store.readJournal(view.task_id)).filter((e) => e.type === 'approval_request');
    return { id: view.task_id, approvalId: String(req?.data.approval_id) };
  }

  it('counts a resume from the kept VM, and keeps none once the task ended', async () => {
    const before = await metrics.registry.metrics();
    expect(count(before, 'resumed')).toBe(0);
    expect(count(before, 'missing')).toBe(0);
    const { id, approvalId } = await pausedTask();
    expect(kept()).toBe(1);
    await runtime.decide(id, [{ approvalId, decision: 'approve' }]);
    // Not started: the decision queues the task, and this runs it here.
    expect(await runtime.run(id)).toMatchObject({ status: 'succeeded' });
    const after = await metrics.registry.metrics();
    expect(count(after, 'resumed')).toBe(1);
    expect(count(after, 'stale')).toBe(0);
    expect(kept()).toBe(0);
  });

  it('drops the kept VM of a paused task that is cancelled, at once', async () => {
    const { id } = await pausedTask();
    expect(kept()).toBe(1);
    await runtime.cancel(id);
    expect(kept()).toBe(0);
  });
});
