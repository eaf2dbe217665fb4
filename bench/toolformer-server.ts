// The bigram completions server of the tests in a process of its own, for bench:toolformer: the scorer's process
// then measures only itself. Prints its base URL on the first line; DELAY_MS delays each answer.
import { readFileSync } from 'node:fs';
import { estimateBigram } from '../test/toolformer/bigram-model.ts';
import { startBigramServer } from '../test/toolformer/bigram-completions-server.ts';

const model = estimateBigram(
  readFileSync(new URL('../test/toolformer/fixtures/bigram-corpus.txt', import.meta.url), 'utf8'),
);
const delayMs = Number(process.env.DELAY_MS ?? 0);
// The pipeline's sampled calls (the durable run's part of the bench): one Calculator call at "(or [".
const complete = (prompt: string): string[] => (prompt.endsWith('(or [') ? ['Calculator(400/1400)'] : []);
const server = await startBigramServer(model, {
  record: false,
  complete,
  ...(delayMs > 0 ? { delayMs } : {}),
});
console.log(server.baseUrl);
process.on('SIGTERM', () => void server.close().then(() => process.exit(0)));
