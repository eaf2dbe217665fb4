import { beforeAll, describe, expect, it } from 'vitest';
import { defineTool } from '../../src/tools/index.ts';
import { payTool, useApiFixture } from './api-fixture.ts';
import type { ApiFixture, ApiKey, ErrorBody } from './api-fixture.ts';

// Who may decide an approval is the runtime's check (ADR 0031): the HTTP routes, the in-process API and the inbox's
// `may_decide` all ask it. A tool declares its own policy; the operator's config only tightens it. Approvals
// expire: the runtime journals the expiry as a decision of `system`, the guest catches APPROVAL_EXPIRED, a late
// decision is a 409. Real runtime, SQLite store, key auth.

/** Needs an approver who did not submit the task. */
const grant = defineTool({
  name: 'grant',
  description: 'grants access',
  approval: { roles: ['approver'], separation: true },
  execute: () => 'granted',
});

/** Its approvals expire after a second. */
const wire = defineTool({
  name: 'wire',
  description: 'wires money',
  approval: { expiresAfterSeconds: 1 },
  execute: () => 'wired',
});

const CATCH_WIRE = `
  try { return await tools.wire({ to: 'x' }); }
  catch (e) { return e.name + ' ' + e.code + (e instanceof ToolRejectedError ? ' caught' : ''); }`;

function helpers(fx: ApiFixture) {
  const post = (url: string, payload: object, key: ApiKey) =>
    fx.app.inject({ method: 'POST', url, payload, headers: key.headers });
  async function until<T>(what: string, read: () => Promise<T | null>): Promise<T> {
    for (let i = 0; i < 3000; i++) {
      const value = await read();
      if (value !== null) return value;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error(`never: ${what}`);
  }
  async function paused(code: string, key: ApiKey): Promise<{ id: string; approval: string }> {
    const res = await post('/api/v1/tasks', { code }, key);
    expect(res.statusCode, res.body).toBe(201);
    const id = res.json<{ task_id: string }>().task_id;
    return until(`task ${id} waits for approval`, async () => {
      const view = await fx.runtime.get(id);
      const approval = view?.status === 'paused' ? view.pending_approvals[0]?.id : undefined;
      return approval === undefined ? null : { id, approval };
    });
  }
  const ended = (id: string) =>
    until(`task ${id} ends`, async () => {
      const view = await fx.runtime.get(id);
      return view?.status === 'succeeded' || view?.status === 'failed' ? view : null;
    });
  const decide = (t: { id: string; approval: string }, key: ApiKey, decision = 'approve') =>
    post(`/api/v1/tasks/${t.id}/approvals/${t.approval}`, { decision }, key);
  async function inbox(key: ApiKey, taskId: string) {
    const res = await fx.app.inject({ url: '/api/v1/approvals', headers: key.headers });
    expect(res.statusCode, res.body).toBe(200);
    const items = res.json<{
      approvals: { task_id: string; may_decide: boolean; expires_at: string | null }[];
    }>().approvals;
    return items.find((a) => a.task_id === taskId);
  }
  return { post, paused, ended, decide, inbox, until };
}

describe('the operator policy holds on every path, not only over HTTP', () => {
  const fx = useApiFixture('http-approval-runtime-check', {
    tools: [payTool()],
    runtime: { approvals: { roles: null, separation: true, ttlSeconds: null } },
  });
  const h = helpers(fx);
  let member: ApiKey;
  beforeAll(async () => {
    member = await fx.key('acme');
  });

  it('refuses the submitter deciding through the in-process API; another actor decides', async () => {
    const t = await h.paused('return await tools.pay({ amount: 500 });', member);
    const self = fx.runtime.decide(t.id, [{ approvalId: t.approval, decision: 'approve' }], {
      actor: `key:${member.id}`,
    });
    await expect(self).rejects.toMatchObject({
      code: 'APPROVER_NOT_ALLOWED',
      details: { reason: 'same_as_submitter' },
    });
    expect((await fx.runtime.get(t.id))?.pending_approvals).toHaveLength(1);
    const inbox = await fx.runtime.approvals({ decider: { actor: `key:${member.id}` } });
    expect(inbox.approvals.find((a) => a.task_id === t.id)?.may_decide).toBe(false);
    await fx.runtime.decide(t.id, [{ approvalId: t.approval, decision: 'approve' }], { actor: 'ops' });
    expect((await h.ended(t.id)).result?.output).toBe('paid 500');
  });
});

describe("a tool's own approval policy", () => {
  const fx = useApiFixture('http-approval-tool-policy', { tools: [grant, payTool()] });
  const h = helpers(fx);
  let member: ApiKey;
  let approver: ApiKey;
  let approver2: ApiKey;
  beforeAll(async () => {
    member = await fx.key('acme');
    approver = await fx.key('acme', 'approver');
    approver2 = await fx.key('acme', 'approver');
  });

  it('keeps its approvals for approver keys that did not submit the task, with no operator policy', async () => {
    const t = await h.paused('return await tools.grant({});', approver);
    const byMember = await h.decide(t, member);
    expect(byMember.statusCode, byMember.body).toBe(403);
    expect(byMember.json<ErrorBody>().error).toMatchObject({
      code: 'APPROVER_NOT_ALLOWED',
      details: { reason: 'role', role: 'member' },
    });
    const bySelf = await h.decide(t, approver);
    expect(bySelf.statusCode, bySelf.body).toBe(403);
    expect(bySelf.json<ErrorBody>().error.details).toMatchObject({ reason: 'same_as_submitter' });
    expect((await h.inbox(member, t.id))?.may_decide).toBe(false);
    expect((await h.inbox(approver, t.id))?.may_decide).toBe(false);
    expect((await h.inbox(approver2, t.id))?.may_decide).toBe(true);
    const ok = await h.decide(t, approver2);
    expect(ok.statusCode, ok.body).toBe(200);
    expect((await h.ended(t.id)).result?.output).toBe('granted');
  });

  it('leaves the other tools as they were: the submitting member approves its own payment', async () => {
    const t = await h.paused('return await tools.pay({ amount: 500 });', member);
    expect((await h.decide(t, member)).statusCode).toBe(200);
  });
});

describe('the operator config only tightens a tool policy', () => {
  const fx = useApiFixture('http-approval-tighten', {
    tools: [grant],
    runtime: { approvals: { roles: ['admin', 'member'], separation: false, ttlSeconds: null } },
  });
  const h = helpers(fx);

  it('an approver key the tool allows is refused when the config does not name its role; no one else gets in', async () => {
    const member = await fx.key('acme');
    const approver = await fx.key('acme', 'approver');
    const t = await h.paused('return await tools.grant({});', member);
    // The config allows members, the tool does not: the intersection (no key role) decides.
    for (const key of [approver, await fx.key('acme')]) {
      const res = await h.decide(t, key);
      expect(res.statusCode, res.body).toBe(403);
      expect(res.json<ErrorBody>().error.details).toMatchObject({ reason: 'role' });
    }
  });
});

describe('defineTool checks an approval policy when the tool is defined', () => {
  const bad: [string, unknown, boolean?][] = [
    ['an unknown role', { roles: ['root'] }],
    ['an empty role list', { roles: [] }],
    ['a string for separation', { separation: 'yes' }],
    ['a zero expiry', { expiresAfterSeconds: 0 }],
    ['a fractional expiry', { expiresAfterSeconds: 1.5 }],
    ['an expiry over a year', { expiresAfterSeconds: 40_000_000 }],
    ['an unknown field', { expiresIn: 10 }],
    ['a policy on a tool that never needs approval', { separation: true }, false],
  ];
  for (const [what, approval, requiresApproval] of bad) {
    it(`refuses ${what} with INVALID_ARGUMENT naming the field`, () => {
      let thrown: unknown;
      try {
        defineTool({
          name: 'x',
          description: 'x',
          approval: approval as never,
          ...(requiresApproval === undefined ? {} : { requiresApproval }),
          execute: () => null,
        });
      } catch (e) {
        thrown = e;
      }
      expect(thrown).toMatchObject({ code: 'INVALID_ARGUMENT' });
      expect((thrown as Error).message).toContain('approval');
    });
  }
  it('makes a tool with a policy need approval', () => {
    expect(grant.requiresApproval).toBe(true);
    expect(grant.approval).toEqual({ roles: ['approver'], separation: true });
  });
});

describe('approvals expire', () => {
  const fx = useApiFixture('http-approval-expiry', { tools: [wire, payTool()] });
  const h = helpers(fx);
  let member: ApiKey;
  beforeAll(async () => {
    member = await fx.key('acme');
  });

  it('expires a request no one decided: journaled by system, APPROVAL_EXPIRED in the guest, 409 afterwards', async () => {
    const t = await h.paused(CATCH_WIRE, member);
    const item = await h.inbox(member, t.id);
    expect(Date.parse(item?.expires_at ?? '')).toBeGreaterThan(Date.now() - 60_000);
    const view = await h.ended(t.id);
    expect(view.status).toBe('succeeded');
    expect(view.result?.output).toBe('ToolRejectedError APPROVAL_EXPIRED caught');
    const journal = await fx.store.readJournal(t.id);
    const expiry = journal.find((e) => e.type === 'approval_decision');
    expect(expiry?.data).toMatchObject({
      approval_id: t.approval,
      decision: 'reject',
      actor: 'system',
      expired: true,
    });
    // The audit trail shows who moved the task on: the system, from paused (approval_required) to pending.
    const audit = await fx.store.readAudit(t.id, { limit: 100 });
    const resumed = audit.filter(
      (e) => e.type === 'status' && e.data.from === 'paused' && e.data.to === 'pending',
    );
    expect(resumed.map((e) => e.data.actor)).toEqual(['system']);
    for (const decision of ['approve', 'reject']) {
      const late = await h.decide(t, member, decision);
      expect(late.statusCode, late.body).toBe(409);
      expect(late.json<ErrorBody>().error).toMatchObject({
        code: 'APPROVAL_EXPIRED',
        details: { approval_id: t.approval },
      });
      const all = await h.post(`/api/v1/tasks/${t.id}/approvals`, { decision }, member);
      expect(all.statusCode, all.body).toBe(409);
      expect(all.json<ErrorBody>().error.code).toBe('APPROVAL_EXPIRED');
    }
  });

  it('replays an expired call exactly: after a later approval the run replays the journal, same outcome', async () => {
    const code = `
      let first;
      try { await tools.wire({ to: 'y' }); first = 'ran'; } catch (e) { first = e.code; }
      const paid = await tools.pay({ amount: 300 });
      return first + ' / ' + paid;`;
    const t = await h.paused(code, member);
    // The wire request expires and the task runs on to the payment, which waits for a human.
    const pay = await h.until('the payment waits', async () => {
      const v = await fx.runtime.get(t.id);
      const a = v?.pending_approvals.find((p) => p.tool === 'tools.pay');
      return v?.status === 'paused' && a ? a : null;
    });
    expect((await h.decide({ id: t.id, approval: pay.id }, member)).statusCode).toBe(200);
    const view = await h.ended(t.id);
    expect(view.status, JSON.stringify(view.error)).toBe('succeeded');
    expect(view.result?.output).toBe('APPROVAL_EXPIRED / paid 300');
    const journal = await fx.store.readJournal(t.id);
    const outcomes = journal.filter((e) => e.type === 'tool_outcome');
    expect(outcomes).toHaveLength(2);
    expect(journal.filter((e) => e.type === 'approval_decision' && e.data.expired === true)).toHaveLength(1);
  });
});
