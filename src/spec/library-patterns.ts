import { CodecallError } from '../errors/index.ts';

/** A module name (`json`, `os.path`), or a package with `.*` for it and every module below it (ADR 0041). */
const PATTERN = /^[\p{L}_][\p{L}\p{N}_]*(\.[\p{L}_][\p{L}\p{N}_]*)*(\.\*)?$/u;

export const LIBRARY_PATTERN_HELP =
  "a module name ('json', 'os.path') or a package followed by '.*' ('numpy.*': numpy and its submodules)";

/** Whether an `allowed_libraries` entry is well formed. */
export function isLibraryPattern(entry: string): boolean {
  return PATTERN.test(entry);
}

/**
 * Refuses a malformed `allowed_libraries` entry with INVALID_LIBRARY_PATTERN naming it: a typo such as `numpy*`
 * or `*` would otherwise allow nothing (or, read loosely, everything) without a word.
 */
export function checkLibraryPatterns(field: string, entries: readonly string[]): void {
  for (const entry of entries) {
    if (!isLibraryPattern(entry)) {
      throw new CodecallError(
        'INVALID_LIBRARY_PATTERN',
        `${field}: ${JSON.stringify(entry)} is not a library pattern; use ${LIBRARY_PATTERN_HELP}`,
        { details: { field, entry } },
      );
    }
  }
}
