import { describe, expect, it } from 'vitest';
import { useApiFixture } from './api-fixture.ts';

// Issue 17 item 11: the schema's largest timeout_seconds (2,147,483 s) plus a driver's grace passed what one Node
// timer holds (2^31-1 ms), and Node fires such a timer after 1 ms (TimeoutOverflowWarning): the task timed out
// at once. Every timer whose delay a request sets waits in steps (spec/long-timeout.ts).
const SCHEMA_MAX_SECONDS = 2_147_483;

describe('HTTP long timers', () => {
  const fx = useApiFixture('http-long-timers');

  it('runs a ~1 s program under timeout_seconds, cpu_seconds and deadline_seconds at the schema maximum', async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error): void => void warnings.push(w);
    process.on('warning', onWarning);
    try {
      const key = await fx.key('tenant-long');
      const res = await fx.app.inject({
        method: 'POST',
        url: '/api/v1/tasks',
        headers: { ...key.headers, 'content-type': 'application/json' },
        payload: JSON.stringify({
          code: "await new Promise((r) => setTimeout(r, 1000));\nreturn 'slept';",
          deadline_seconds: SCHEMA_MAX_SECONDS,
          tool_constraints: { timeout_seconds: SCHEMA_MAX_SECONDS, cpu_seconds: SCHEMA_MAX_SECONDS },
        }),
      });
      expect(res.statusCode).toBe(201);
      const id = res.json<{ task_id: string }>().task_id;
      const view = await fx.runtime.wait(id, { signal: AbortSignal.timeout(60_000) });
      expect(view.error).toBeNull();
      expect(view.status).toBe('succeeded');
      expect(view.result?.output).toBe('slept');
      expect(warnings.filter((w) => w.name === 'TimeoutOverflowWarning').map((w) => w.message)).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  }, 90_000);
});
