import { parentPort } from 'node:worker_threads';
import { prepareProgram } from './transpile.ts';

// The type-stripping thread (see type-stripper.ts): one program at a time, terminated if one takes too long.
const port = parentPort;
if (!port) throw new Error('strip-worker-main runs as a worker thread');
port.on('message', (msg: { id: number; code: string; language: 'javascript' | 'typescript' }) => {
  // Loading the TypeScript compiler (once per thread) is the driver's cost, not the program's: say when.
  const compilerLoad = (loading: 'start' | 'done'): void => port.postMessage({ id: msg.id, loading });
  port.postMessage({ id: msg.id, program: prepareProgram(msg.code, msg.language, { compilerLoad }) });
});
port.postMessage({ ready: true });
