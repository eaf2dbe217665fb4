// temporary probe (not committed): where the kept resume's time goes, per store method
import { mkdtemp } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createQuickJsDriver, createSqliteTaskStore } from '../dist/internal.js';
import type { TaskStore } from '../dist/internal.js';
import { createResumeBench } from './durable-resume.ts';

const dir = await mkdtemp(join(tmpdir(), 'probe-'));
const real: TaskStore = await createSqliteTaskStore({ path: join(dir, 'tasks.db') });
const times = new Map<string, number[]>();
let on = false;
let armed = false;
const store = new Proxy(real, {
  get(t, p, r) {
    const v = Reflect.get(t, p, r);
    if (typeof v !== 'function') return v;
    return (...args: unknown[]) => {
      const s = performance.now();
      if (p === 'updateTask' && (args[1] as { status?: string }).status === 'pending') armed = true;
      if (p === 'claimTask' && armed) { on = true; armed = false; }
      const out = v.apply(t, args);
      const rec = () => { if (on) { const k = String(p); (times.get(k) ?? times.set(k, []).get(k)!).push(performance.now() - s); } };
      if (out && typeof out.then === 'function') return out.finally(rec);
      rec();
      return out;
    };
  },
}) as TaskStore;
const driver = createQuickJsDriver({ workers: 2 });
await driver.ready();
const b = createResumeBench(store, driver);
const calls = Number(process.env.CALLS ?? 1000);
for (let i = 0; i < 2; i++) await b.resume(calls);
on = false; times.clear();
const N = Number(process.env.N ?? 7);
const ms: number[] = []; const cpu: number[] = [];
for (let i = 0; i < N; i++) {
  const r = await b.resume(calls);
  on = false;
  ms.push(r.ms); cpu.push(r.cpuMs);
}
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log('load', loadavg()[0]?.toFixed(1), 'resume p50', med(ms).toFixed(1), 'cpu p50', med(cpu).toFixed(1));
for (const [k, v] of times) console.log(k.padEnd(24), 'calls/resume', (v.length / N).toFixed(1), 'sum/resume ms', (v.reduce((a, b) => a + b, 0) / N).toFixed(2));
console.log(JSON.stringify(b.runner.pausedVms?.counts));
await store.close(); await driver.close();
