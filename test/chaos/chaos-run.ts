// One chaos run: real `codecall serve` processes on one SQLite file, the seeded tasks, the harness deciding as an
// operator, and the seeded faults (SIGKILL, a second server, SIGSTOP past the lease); then the figures.
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { cliTestDir, codecall, until } from '../cli-fixture.ts';
import { startWebhookReceiver } from './webhook-receiver.ts';
import { rng } from '../durable/crash-fixture.ts';
import { figuresOf } from './chaos-checks.ts';
import type { AppliedFault, ChaosFigures, FinalView } from './chaos-checks.ts';
import { readFacts, runningOwners } from './chaos-facts.ts';
import { auditKeyEnv, createChaosDatabase, dbArgument, writeLockFree } from './chaos-db.ts';
import type { ChaosDb } from './chaos-db.ts';
import { createOperator } from './chaos-operator.ts';
import { makePlan } from './chaos-plan.ts';
import type { Fault } from './chaos-plan.ts';
import { startOnTakenPort, startServer } from './chaos-servers.ts';
import type { ChaosServer } from './chaos-servers.ts';
import { TOOLS_SOURCE } from './chaos-tools.ts';
import { startLedger } from './ledger.ts';

export interface ChaosOptions {
  readonly seed: number;
  readonly tasks: number;
  readonly faults: number;
  readonly leaseMs?: number;
  readonly concurrency?: number;
  /** How long the tasks may take to end once the last fault is over. */
  readonly settleMs?: number;
  /** A file to write the run's raw material to (plan, ledger, journal and audit facts, faults, decisions). */
  readonly dumpTo?: string;
  /** The servers share a SQLite file (default) or a PostgreSQL database made for the run on this server. */
  readonly postgres?: string;
  /** Servers started at once (default 1; more join with `second` faults). */
  readonly servers?: number;
  /** SIGKILLs among the faults at least. */
  readonly kills?: number;
  /** Every task and the batch carry a callback_url to a receiver that checks each delivery's signature. */
  readonly webhooks?: boolean;
  /**
   * The servers check API keys, and the tasks are submitted by these tenants (a batch each, with a key of its own,
   * the plan's tasks dealt round-robin); the harness steers them all with the bootstrap admin key.
   */
  readonly tenants?: readonly string[];
}

export async function runChaos(options: ChaosOptions): Promise<ChaosFigures> {
  const leaseMs = options.leaseMs ?? 1500;
  const dir = await cliTestDir('chaos');
  await writeFile(join(dir, 'tools.js'), TOOLS_SOURCE);
  const ledger = await startLedger();
  const plan = makePlan(options);
  const random = rng(options.seed ^ 0x5eed);
  const effects = new Map(plan.tasks.flatMap((t) => t.steps.flat()).map((c) => [c.op, c.effect]));
  const operator = createOperator({
    ledger,
    random,
    effectOf: (op) => effects.get(op) ?? 'read',
    headers: () => admin,
  });
  const live: ChaosServer[] = [];
  const started: ChaosServer[] = [];
  const stopped = new Set<ChaosServer>();
  const faults: AppliedFault[] = [];
  const made = options.postgres
    ? await createChaosDatabase(options.postgres, `chaos_${process.pid}_${options.seed}`)
    : null;
  const db: ChaosDb = made
    ? { kind: 'postgres', url: made.url }
    : { kind: 'sqlite', path: join(dir, 'tasks.db') };
  /** Stops whose tasks another server took over while the stopped one slept. */
  let takeovers = 0;
  let stopsHoldingWriteLock = 0;
  const receiver = options.webhooks ? await startWebhookReceiver() : null;
  const serverOptions = {
    dir,
    db,
    ledgerUrl: ledger.url,
    leaseMs,
    concurrency: options.concurrency ?? 2,
    auth: options.tenants !== undefined,
    ...(receiver ? { webhookSecret: receiver.secret } : {}),
  };
  let admin: Record<string, string> = {};
  const start = async (): Promise<ChaosServer> => {
    const s = await startServer(serverOptions);
    live.push(s);
    started.push(s);
    return s;
  };
  const answering = (): ChaosServer | undefined => live.find((s) => !stopped.has(s));
  let operating = true;
  const operatorLoop = (async () => {
    while (operating) {
      const s = answering();
      if (s) await operator.poll(s.base, faults.length).catch(() => undefined);
      await sleep(100);
    }
  })();
  try {
    const first = await start();
    for (let n = 1; n < (options.servers ?? 1); n++) await start();
    if (options.tenants) {
      const key = /^\s+(cc_\S+)$/m.exec(first.stderr())?.[1];
      if (key === undefined) throw new Error(`no bootstrap admin key:\n${first.stderr()}`);
      admin = { authorization: `Bearer ${key}` };
    }
    const { batchIds, taskIds } = await submitBatches(first.base);
    const batch = async (): Promise<{ completed: boolean; counts: Record<string, number> }> => {
      const s = answering();
      if (!s) throw new Error('no server answers');
      const counts: Record<string, number> = {};
      let completed = true;
      for (const id of batchIds) {
        const r = await fetch(`${s.base}/api/v1/batches/${id}`, { headers: admin });
        const b = (await r.json()) as { completed_at: string | null; counts: Record<string, number> };
        completed &&= b.completed_at !== null;
        for (const [k, n] of Object.entries(b.counts)) counts[k] = (counts[k] ?? 0) + n;
      }
      return { completed, counts };
    };
    const endedAtLeast = async (n: number): Promise<boolean> => {
      const { counts } = await batch();
      return (counts.succeeded ?? 0) + (counts.failed ?? 0) + (counts.cancelled ?? 0) >= n;
    };
    for (const fault of plan.faults) {
      // A stalled run still gets its faults: past the wait, the fault strikes anyway.
      await until(() => endedAtLeast(fault.atEnded).catch(() => false), 20_000).catch(() => undefined);
      await sleep(fault.jitterMs);
      await strike(fault);
    }
    const ended = async (): Promise<boolean> => (await batch()).completed;
    await until(() => ended().catch(() => false), options.settleMs ?? 60_000).catch(() => undefined);
    operating = false;
    await operatorLoop;
    const finals = await finalViews(answering()?.base ?? '', taskIds, admin);
    // Every task's end and the batch's told at least once, by whichever server is up (a dispatcher that died
    // with a message claimed leaves it to the others once its claim runs out).
    const told = (): boolean =>
      receiver === null ||
      (taskIds.every((id) =>
        receiver.deliveries.some((d) => d.taskId === id && d.type.startsWith('task.')),
      ) &&
        receiver.deliveries.filter((d) => d.type === 'batch.completed').length >= batchIds.length);
    await until(told, 60_000).catch(() => undefined);
    for (const s of live) s.kill('SIGKILL');
    await Promise.all(live.map((s) => s.exited));
    const audit = await codecall(auditKeyEnv(db), 'audit', 'verify', '--db', dbArgument(db), '--json');
    const keyedAudit = audit.code === 0 && /"keyed":\s*true/.test(audit.stdout);
    const facts = await readFacts(db);
    const run = {
      plan,
      taskIds,
      finals,
      ledger: ledger.records,
      facts,
      faults,
      operator: operator.figures,
      leaseMs,
    };
    // Everything a failing seed needs looking into, when asked for.
    if (options.dumpTo) {
      const facts_ = { calls: [...facts.calls], holdings: [...facts.holdings] };
      const servers = started.map((s) => ({ pid: s.pid, stderr: s.stderr() }));
      const plain = { ...run, facts: facts_, servers };
      await writeFile(options.dumpTo, JSON.stringify(plain, null, 1));
    }
    const endEvents = new Set(['task.succeeded', 'task.failed', 'task.cancelled']);
    const webhooks = receiver && {
      deliveries: receiver.deliveries.length,
      unsigned: receiver.deliveries.filter((d) => !d.signed).length,
      tasksNeverTold: taskIds.filter(
        (id) => !receiver.deliveries.some((d) => d.taskId === id && d.signed && endEvents.has(d.type)),
      ).length,
      batchCompleted: receiver.deliveries.filter((d) => d.type === 'batch.completed' && d.signed).length,
    };
    return {
      ...figuresOf(run),
      stopsTakenOver: takeovers,
      stopsHoldingWriteLock,
      auditVerify: {
        exitCode: audit.code,
        keyed: keyedAudit,
        output: audit.code === 0 ? '' : `${audit.stdout}${audit.stderr}`,
      },
      ...(webhooks ? { webhooks } : {}),
    };
  } finally {
    operating = false;
    for (const s of live) {
      s.kill('SIGCONT');
      s.kill('SIGKILL');
    }
    await Promise.all(live.map((s) => s.exited));
    await ledger.close();
    await receiver?.close();
    await made?.drop();
    await rm(dir, { recursive: true, force: true });
  }

  /** The plan's tasks as one batch, or a batch per tenant (each with its own member key); ids in plan order. */
  async function submitBatches(base: string): Promise<{ batchIds: string[]; taskIds: string[] }> {
    const tenants = options.tenants ?? [null];
    const taskIds: string[] = [];
    const batchIds: string[] = [];
    for (const [n, tenant] of tenants.entries()) {
      let headers: Record<string, string> = {};
      if (tenant !== null) {
        const made = await fetch(`${base}/api/v1/keys`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...admin },
          body: JSON.stringify({ tenant, role: 'member' }),
        });
        if (made.status !== 201) throw new Error(`key refused: ${made.status} ${await made.text()}`);
        headers = { authorization: `Bearer ${((await made.json()) as { key: string }).key}` };
      }
      const mine = plan.tasks.filter((t) => t.index % tenants.length === n);
      const created = await fetch(`${base}/api/v1/tasks/batch`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({
          tasks: mine.map((t) => ({
            code: t.code,
            metadata: { i: t.index },
            ...(receiver ? { callback_url: receiver.url } : {}),
          })),
          ...(receiver ? { callback_url: receiver.url } : {}),
        }),
      });
      if (created.status !== 201) throw new Error(`batch refused: ${created.status} ${await created.text()}`);
      const body = (await created.json()) as { batch_id: string; task_ids: string[] };
      batchIds.push(body.batch_id);
      mine.forEach((t, i) => (taskIds[t.index] = body.task_ids[i] ?? ''));
    }
    return { batchIds, taskIds };
  }

  async function strike(fault: Fault): Promise<void> {
    // A fault strikes a server holding work when one does (a seeded pick among them), else any server up.
    const pickLive = async (): Promise<ChaosServer> => {
      const up = live.filter((s) => !stopped.has(s));
      const busy = new Set(await runningOwners(db));
      const holding = up.filter((s) => busy.has(s.pid));
      const from = holding.length > 0 ? holding : up;
      return from[Math.floor(random() * from.length)] as ChaosServer;
    };
    if (fault.kind === 'kill' || (fault.kind === 'second' && live.length >= 2)) {
      const victim = await pickLive();
      faults.push({ kind: 'kill', pid: victim.pid, at: Date.now() });
      victim.kill('SIGKILL');
      await victim.exited;
      live.splice(live.indexOf(victim), 1);
      if (live.length === 0) await start();
      return;
    }
    if (fault.kind === 'taken-port') {
      const target = await pickLive();
      const { pid } = await startOnTakenPort(serverOptions, target.base);
      faults.push({ kind: 'taken-port', pid, at: Date.now() });
      return;
    }
    if (fault.kind === 'second') {
      const s = await start();
      faults.push({ kind: 'second', pid: s.pid, at: Date.now() });
      return;
    }
    // Someone must be up to take the stopped server's tasks over once its lease has run out.
    if (live.length < 2) await start();
    const victim = await pickLive();
    stopped.add(victim);
    const held = (await runningOwners(db)).filter((pid) => pid === victim.pid).length;
    victim.kill('SIGSTOP');
    // Stopped inside a transaction, it holds SQLite's write lock and stalls every server on the file (no lease
    // helps there): noted, then let go and stopped again, so the fault tests fencing as meant.
    for (let tries = 0; tries < 20 && !writeLockFree(db); tries++) {
      stopsHoldingWriteLock++;
      victim.kill('SIGCONT');
      await sleep(5 + Math.floor(random() * 50));
      victim.kill('SIGSTOP');
    }
    const applied: AppliedFault = { kind: 'stop', pid: victim.pid, at: Date.now() };
    faults.push(applied);
    // Past the lease, and until the others have taken its tasks over (or long enough that they would have).
    await sleep(leaseMs + 500);
    await until(async () => !(await runningOwners(db)).includes(victim.pid), 15_000).catch(() => undefined);
    if (held > 0 && !(await runningOwners(db)).includes(victim.pid)) takeovers++;
    victim.kill('SIGCONT');
    applied.resumedAt = Date.now();
    stopped.delete(victim);
  }
}

/** Each task's view, a few at a time (a server holds a tenant past its share of requests: ADR 0039), retried. */
async function finalViews(
  base: string,
  taskIds: readonly string[],
  headers: Record<string, string>,
): Promise<(FinalView | null)[]> {
  const views: (FinalView | null)[] = [];
  const one = async (id: string): Promise<FinalView | null> => {
    for (let attempt = 0; attempt < 20; attempt++) {
      try {
        const r = await fetch(`${base}/api/v1/tasks/${id}`, { headers });
        if (r.ok) {
          const view = (await r.json()) as { status: string; result: { output: unknown } | null };
          return { status: view.status, output: view.result?.output ?? null };
        }
      } catch {
        // the server is busy or going: asked again
      }
      await sleep(100);
    }
    return null;
  };
  for (let i = 0; i < taskIds.length; i += 8) {
    views.push(...(await Promise.all(taskIds.slice(i, i + 8).map(one))));
  }
  return views;
}
