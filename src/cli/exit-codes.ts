/** A bad command line (unknown flag, bad value) or a refused key: fixing the command is the way on. */
export const EXIT_USAGE = 2;
