import { execFile } from 'node:child_process';
import { GUEST_RUNNER } from './guest-runner.ts';

/** The fd a sandbox reads the compiled runner from (after the protocol fds 3/4 and the seccomp fd 5). */
export const RUNNER_FD = 6;

/**
 * What the interpreter runs when it gets the runner compiled: marshal is built in, so this costs nothing, while
 * compiling the runner's ~38 KB of source took 5-11 ms of every cold start.
 */
export const RUNNER_BOOTSTRAP = `import marshal, os\nexec(marshal.loads(os.fdopen(${RUNNER_FD}, 'rb').read()))`;

const COMPILE =
  'import base64, marshal, sys\n' +
  "sys.stdout.write(base64.b64encode(marshal.dumps(compile(sys.stdin.read(), '<codecall-runner>', 'exec'))).decode())";

const compiled = new Map<string, Promise<Buffer | null>>();

/**
 * The runner compiled by `python` (marshal's format is the interpreter's own), once per interpreter; null when it
 * cannot be (the sandbox then gets the source, as before). Only our own source is compiled: nothing runs.
 */
export function compiledRunner(python: string): Promise<Buffer | null> {
  let code = compiled.get(python);
  if (!code) {
    code = new Promise<Buffer | null>((resolve) => {
      const child = execFile(
        python,
        ['-I', '-B', '-c', COMPILE],
        { timeout: 10_000, maxBuffer: 16 * 1024 * 1024, env: {} },
        (error, stdout) => resolve(error ? null : Buffer.from(String(stdout), 'base64')),
      );
      child.stdin?.end(GUEST_RUNNER);
    });
    compiled.set(python, code);
  }
  return code;
}
