import { parentPort } from 'node:worker_threads';
import { prepareProgram } from './transpile.ts';

// The type-stripping thread (see type-stripper.ts): one program at a time, terminated if one takes too long.
const port = parentPort;
if (!port) throw new Error('strip-worker-main runs as a worker thread');
port.on('message', (msg: { id: number; code: string; language: 'javascript' | 'typescript' }) => {
  port.postMessage({ id: msg.id, program: prepareProgram(msg.code, msg.language) });
});
port.postMessage({ ready: true });
