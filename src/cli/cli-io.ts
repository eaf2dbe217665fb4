/** Where a command writes: the process's streams, or a test's buffers. */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

let pipesWatched = false;

/**
 * The process's own streams. A reader that goes away before the output ends (`codecall tasks show ID --journal |
 * head`) is EPIPE on the next write: the command ends there, quietly and with status 0, as nobody reads what
 * it would still print (node ignores SIGPIPE, so without this the write error is an uncaught stack trace).
 */
export function processIo(): CliIo {
  if (!pipesWatched) {
    pipesWatched = true;
    for (const stream of [process.stdout, process.stderr]) {
      stream.on('error', (e: NodeJS.ErrnoException) => {
        if (e.code === 'EPIPE') process.exit(0);
        throw e;
      });
    }
  }
  return {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
  };
}
