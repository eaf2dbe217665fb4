// Run by tls.test.ts in a child process started with NODE_EXTRA_CA_CERTS (the test CA is trusted only there):
// fetches each request of argv[2] through the real egress and prints the outcomes as JSON.
import { createEgress } from '../../src/egress/index.ts';

interface Job {
  readonly url: string;
  readonly allow: string[];
}

const jobs = JSON.parse(process.argv[2] ?? '[]') as Job[];
const egress = createEgress({
  allowPrivate: true,
  lookup: () => Promise.resolve([{ address: '127.0.0.1', family: 4 }]),
});
const outcomes: unknown[] = [];
for (const job of jobs) {
  try {
    const r = await egress.fetch(
      { url: job.url, method: 'GET', headers: [], body: null },
      { allow: job.allow },
      {
        signal: new AbortController().signal,
      },
    );
    outcomes.push({
      status: r.status,
      body: Buffer.from(r.body, 'base64').toString(),
      allowedBy: r.allowedBy,
    });
  } catch (error) {
    const e = error as { code?: unknown; details?: unknown; message?: unknown };
    outcomes.push({ code: e.code, details: e.details, message: e.message });
  }
}
process.stdout.write(JSON.stringify(outcomes));
