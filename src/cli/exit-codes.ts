/** A bad command line (unknown flag, bad value) or a refused key: fixing the command is the way on. */
export const EXIT_USAGE = 2;

/**
 * Stopped by SIGINT (128 + 2, what a shell reports for a process SIGINT ended) before the command did its work:
 * e.g. `exec --db` interrupted before its task was stored, or a second Ctrl-C. A task that SIGINT paused is not
 * this: it is stored and resumable, and the command exits 0.
 */
export const EXIT_INTERRUPTED = 130;

/** `codecall grammar --strict`: the schema has keywords the grammar cannot enforce (listed on stderr). */
export const EXIT_UNENFORCED = 1;
