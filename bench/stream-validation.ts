// Streamed validation (ADR 0057), side by side with its baselines. (1) Its cost: every valid instance of the
// MaskBench sample whose schema compiles without a report, fed to the reply validator byte by byte, against
// JSON.parse plus ajv on the whole value (what validating at the end costs). (2) What it saves: a tool call broken at
// its third piece, streamed 400 pieces 5 ms apart by a loopback server: the time until the client has its reply
// with validation (it aborts at the bad byte) and without (it reads to the end). Usage: npm run bench:stream-validation
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { compileProgram, createOpenAiClient, ReplyValidator, schemaToGrammar } from '../dist/internal.js';
import { sharedDataDir } from '../test/grammar/shared-data.ts';
import { mean, percentile } from './stats.ts';

const data = sharedDataDir();
if (data === undefined) {
  console.log('skipped: no ../shared/data (set CODECALL_SHARED_DATA)');
  process.exit(0);
}

// (1) Cost per value.
const dir = join(data, 'maskbench-sample');
const ajv = new Ajv2020({ strict: false, validateFormats: false });
const validatorUs: number[] = [];
const ajvUs: number[] = [];
let totalBytes = 0;
let values = 0;
for (const file of readdirSync(dir).filter((f) => f.endsWith('.json'))) {
  const group = JSON.parse(readFileSync(join(dir, file), 'utf8')) as {
    schema: Record<string, unknown>;
    tests: { data: unknown; valid: boolean }[];
  };
  try {
    const { grammar, issues } = schemaToGrammar(group.schema, { whitespace: 'flexible' });
    if (issues.length > 0) continue;
    compileProgram(grammar);
  } catch {
    continue;
  }
  let validate;
  try {
    validate = ajv.compile(group.schema);
  } catch {
    continue;
  }
  new ReplyValidator(group.schema); // compile once, as a client does per tool schema
  for (const test of group.tests.filter((t) => t.valid)) {
    const text = JSON.stringify(test.data);
    const bytes = new TextEncoder().encode(text);
    let t = performance.now();
    const v = new ReplyValidator(group.schema);
    v.push(bytes);
    v.end();
    validatorUs.push((performance.now() - t) * 1000);
    t = performance.now();
    validate(JSON.parse(text));
    ajvUs.push((performance.now() - t) * 1000);
    totalBytes += bytes.length;
    values++;
  }
}
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
validatorUs.sort((a, b) => a - b);
ajvUs.sort((a, b) => a - b);
console.log(
  `machine: ${os.cpus()[0]?.model ?? 'unknown'} x${os.cpus().length}, load ${os.loadavg()[0]?.toFixed(1)}`,
);
console.log(
  `cost: ${values} valid values, ${totalBytes} bytes; streamed validator p50 ${percentile(validatorUs, 50).toFixed(1)} µs, ` +
    `p99 ${percentile(validatorUs, 99).toFixed(1)} µs, mean ${mean(validatorUs).toFixed(1)} µs, ` +
    `${((sum(validatorUs) / totalBytes) * 1000).toFixed(0)} ns/byte; JSON.parse+ajv p50 ${percentile(ajvUs, 50).toFixed(1)} µs, ` +
    `mean ${mean(ajvUs).toFixed(1)} µs; ratio of means ${(mean(validatorUs) / mean(ajvUs)).toFixed(1)}x`,
);

// (2) Time saved on a broken reply.
const PIECES = 400;
const INTERVAL_MS = 5;
const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const pieces = ['{"city"', ':"Paris"', ',x', ...Array.from({ length: PIECES - 3 }, () => 'zz')];
    const chunk = (delta: unknown) =>
      `data: ${JSON.stringify({ model: 'm', choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`;
    res.write(
      chunk({ tool_calls: [{ index: 0, id: 'c', function: { name: 'get_weather', arguments: '' } }] }),
    );
    let i = 0;
    const timer = setInterval(() => {
      if (res.destroyed || i === pieces.length) {
        clearInterval(timer);
        if (!res.destroyed) res.end('data: [DONE]\n\n');
        return;
      }
      res.write(chunk({ tool_calls: [{ index: 0, function: { arguments: pieces[i++] } }] }));
    }, INTERVAL_MS);
    res.on('close', () => clearInterval(timer));
  });
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
const request = {
  messages: [{ role: 'user' as const, content: 'weather?' }],
  tools: [{ name: 'get_weather', description: 'the weather', parameters: schema }],
};
const stopMs: number[] = [];
const fullMs: number[] = [];
for (let run = 0; run < 3; run++) {
  const validating = createOpenAiClient({ baseUrl, model: 'm', provider: 'ollama', streamValidation: true });
  let t = performance.now();
  await validating.complete(request);
  stopMs.push(performance.now() - t);
  // The baseline reads the same stream to its end (a tool it has no schema for is not validated).
  t = performance.now();
  await validating.complete({ ...request, tools: [{ ...request.tools[0]!, name: 'other' }] });
  fullMs.push(performance.now() - t);
}
server.close();
stopMs.sort((a, b) => a - b);
fullMs.sort((a, b) => a - b);
console.log(
  `early stop: a call broken at piece 3 of ${PIECES} (${INTERVAL_MS} ms apart): reply after ${percentile(stopMs, 50).toFixed(0)} ms ` +
    `with validation, ${percentile(fullMs, 50).toFixed(0)} ms reading to the end (median of 3); ` +
    `${(percentile(fullMs, 50) / percentile(stopMs, 50)).toFixed(0)}x sooner`,
);
