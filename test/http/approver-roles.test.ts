import { beforeAll, describe, expect, it } from 'vitest';
import { payTool, useApiFixture } from './api-fixture.ts';
import type { ApiFixture, ApiKey, ErrorBody } from './api-fixture.ts';

// Approvals by the right people: approverRoles and approvalSeparation enforced on both decision routes, over the
// real runtime, SQLite store and key auth; the inbox says whether the caller may decide each approval.

const PAY = { code: 'return await tools.pay({ amount: 500 });' };

function helpers(fx: ApiFixture) {
  const post = (url: string, payload: object, key: ApiKey) =>
    fx.app.inject({ method: 'POST', url, payload, headers: key.headers });
  async function paused(key: ApiKey): Promise<{ id: string; approval: string }> {
    const res = await post('/api/v1/tasks', PAY, key);
    expect(res.statusCode, res.body).toBe(201);
    const id = res.json<{ task_id: string }>().task_id;
    for (let i = 0; i < 1000; i++) {
      const view = await fx.runtime.get(id);
      if (view?.status === 'paused' && view.pending_approvals.length > 0) {
        return { id, approval: view.pending_approvals[0]?.id ?? '' };
      }
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error(`task ${id} never waited for approval`);
  }
  const decideOne = (t: { id: string; approval: string }, key: ApiKey) =>
    post(`/api/v1/tasks/${t.id}/approvals/${t.approval}`, { decision: 'approve' }, key);
  const decideAll = (t: { id: string }, key: ApiKey) =>
    post(`/api/v1/tasks/${t.id}/approvals`, { decision: 'approve' }, key);
  return { post, paused, decideOne, decideAll };
}

describe('approver roles and separation of duties', () => {
  const fx = useApiFixture('http-approver-roles', {
    tools: [payTool()],
    runtime: { approvals: { roles: ['approver', 'admin'], separation: true, ttlSeconds: null } },
  });
  const h = helpers(fx);
  let member: ApiKey;
  let otherMember: ApiKey;
  let approver: ApiKey;
  let foreignApprover: ApiKey;
  let admin: ApiKey;
  let admin2: ApiKey;
  beforeAll(async () => {
    member = await fx.key('acme');
    otherMember = await fx.key('acme');
    approver = await fx.key('acme', 'approver');
    foreignApprover = await fx.key('globex', 'approver');
    admin = await fx.key('ops', 'admin');
    admin2 = await fx.key('ops', 'admin');
  });

  it('refuses a member key on both routes (reason role) and the task stays waiting', async () => {
    const t = await h.paused(member);
    for (const res of [await h.decideOne(t, otherMember), await h.decideAll(t, otherMember)]) {
      expect(res.statusCode, res.body).toBe(403);
      const body = res.json<ErrorBody>();
      expect(body.error.code).toBe('APPROVER_NOT_ALLOWED');
      expect(body.error.details).toMatchObject({ reason: 'role', role: 'member' });
    }
    expect((await fx.runtime.get(t.id))?.pending_approvals).toHaveLength(1);
  });

  it('lets an approver key of the tenant approve: the task runs the call', async () => {
    const t = await h.paused(member);
    const res = await h.decideOne(t, approver);
    expect(res.statusCode, res.body).toBe(200);
    for (let i = 0; i < 1000 && (await fx.runtime.get(t.id))?.status !== 'succeeded'; i++) {
      await new Promise((r) => setTimeout(r, 10));
    }
    expect((await fx.runtime.get(t.id))?.result?.output).toBe('paid 500');
  });

  it('refuses the submitting key itself (same_as_submitter), even an approver or admin key', async () => {
    for (const key of [approver, admin]) {
      const t = await h.paused(key);
      for (const res of [await h.decideOne(t, key), await h.decideAll(t, key)]) {
        expect(res.statusCode, res.body).toBe(403);
        expect(res.json<ErrorBody>().error).toMatchObject({
          code: 'APPROVER_NOT_ALLOWED',
          details: { reason: 'same_as_submitter' },
        });
      }
      // Another allowed key may: separation is per key.
      const other = key === admin ? admin2 : admin;
      expect((await h.decideAll(t, other)).statusCode).toBe(200);
    }
  });

  it("keeps tenants apart: another tenant's approver gets 404, not a decision", async () => {
    const t = await h.paused(member);
    expect((await h.decideOne(t, foreignApprover)).statusCode).toBe(404);
  });

  it('shows in the inbox whether the caller may decide each approval', async () => {
    const t = await h.paused(approver);
    const inbox = async (key: ApiKey) => {
      const res = await fx.app.inject({ url: '/api/v1/approvals', headers: key.headers });
      expect(res.statusCode, res.body).toBe(200);
      const items = res.json<{ approvals: { task_id: string; may_decide: boolean }[] }>().approvals;
      return items.find((a) => a.task_id === t.id)?.may_decide;
    };
    expect(await inbox(approver)).toBe(false);
    expect(await inbox(member)).toBe(false);
    expect(await inbox(admin)).toBe(true);
  });
});

describe('approvals without a policy (the default)', () => {
  const fx = useApiFixture('http-approver-open', { tools: [payTool()] });
  const h = helpers(fx);
  it("keeps today's behaviour: the submitting member key approves its own task", async () => {
    const member = await fx.key('acme');
    const t = await h.paused(member);
    expect((await h.decideOne(t, member)).statusCode).toBe(200);
  });
});
