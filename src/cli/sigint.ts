import { EXIT_INTERRUPTED } from './exit-codes.ts';

// SIGINT in the CLI. Node's default ends the process silently; here a SIGINT that comes before a command has taken
// SIGINT over ends it saying so (exit 130), and a command that runs a task takes it over from its first line on.
// Listeners are handed over add-first: a signal is only seen by Node while some listener is on (with none, Node
// drops its watcher, and a SIGINT already received but not yet dispatched is lost).

let early: (() => void) | undefined;

/**
 * bin/codecall.js calls this before it loads the CLI: until a command takes SIGINT over (`onSigint`), a SIGINT
 * ends the process with EXIT_INTERRUPTED and a line on stderr.
 */
export function holdSigint(): void {
  if (early) return;
  early = () => {
    process.stderr.write('interrupted (SIGINT)\n');
    process.exit(EXIT_INTERRUPTED);
  };
  process.on('SIGINT', early);
}

/** A command takes SIGINT over: `listener` hears every SIGINT until the returned function hands it back. */
export function onSigint(listener: (count: number) => void): () => void {
  let count = 0;
  const heard = (): void => listener(++count);
  process.on('SIGINT', heard);
  if (early) process.off('SIGINT', early);
  return () => {
    if (early && !process.listeners('SIGINT').includes(early)) process.on('SIGINT', early);
    process.off('SIGINT', heard);
  };
}

/**
 * A command takes the next SIGINT over: `listener` hears it, and SIGINT goes back to what it was before (a
 * second one ends the process). The returned function hands it back unheard.
 */
export function onFirstSigint(listener: () => void): () => void {
  const release = onSigint(() => {
    release();
    listener();
  });
  return release;
}

export interface Interrupt {
  /** Aborted by the first SIGINT. */
  readonly signal: AbortSignal;
  /** Hands SIGINT back (after the command's work). */
  release(): void;
}

/**
 * SIGINT for a command that runs a task here: the first aborts `signal` and says `first()` on stderr; a second
 * says `second()` and ends the process at once (EXIT_INTERRUPTED), which a crash recovery then handles.
 */
export function interruptOnSigint(
  write: (text: string) => void,
  messages: { first: () => string; second: () => string },
): Interrupt {
  const controller = new AbortController();
  const release = onSigint((count) => {
    if (count > 1) {
      write(`${messages.second()}\n`);
      process.exit(EXIT_INTERRUPTED);
    }
    write(`${messages.first()}\n`);
    controller.abort();
  });
  return { signal: controller.signal, release };
}
