import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { sandboxReachableTmpdir } from './proc-masks.ts';

/**
 * matplotlib's font list (`fontlist-v<N>.json`), built once per image and bound read-only into each sandbox's
 * /tmp (its MPLCONFIGDIR): without it every chart rebuilt the list in the sandbox's fresh /tmp (0.1 to 0.7 s a run).
 * It is built inside a sandbox, so it lists exactly the fonts a sandbox sees (the host may have others).
 */
const FONT_LIST = /^fontlist-v\d+\.json$/;

export function isFontListName(name: string): boolean {
  return FONT_LIST.test(name);
}

/** The program that builds the list and leaves it in the workspace, where it comes back as an artifact. */
export const FONT_CACHE_PROGRAM = `import glob, os, shutil
import matplotlib.font_manager
for path in glob.glob('/tmp/fontlist-v*.json'):
    shutil.copy(path, os.path.basename(path))
`;

/** codecall's cache directory: CODECALL_CACHE_DIR, else $XDG_CACHE_HOME/codecall, else ~/.cache/codecall. */
export function defaultCacheDir(): string {
  const env = process.env;
  if (env.CODECALL_CACHE_DIR) return env.CODECALL_CACHE_DIR;
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'codecall');
}

/** Where the list of one image lives: a new matplotlib or interpreter builds its own. */
export function fontCacheDir(root: string, matplotlib: string, python: string): string {
  return join(root, `matplotlib-${matplotlib}-cpython-${python}`);
}

export interface FontList {
  /** Its file name, the one matplotlib looks for in /tmp. */
  readonly name: string;
  readonly data: Buffer;
}

/** The list saved in `dir`, or null (none yet, or unreadable). */
export function readFontList(dir: string): FontList | null {
  try {
    const name = readdirSync(dir).find((n) => FONT_LIST.test(n));
    return name === undefined ? null : { name, data: readFileSync(join(dir, name)) };
  } catch {
    return null;
  }
}

/** Saves a list the build made: written aside and renamed, so a concurrent reader sees all of it or nothing. */
export function saveFontList(dir: string, list: FontList): void {
  if (!FONT_LIST.test(list.name)) throw new Error(`not a font list: ${list.name}`);
  mkdirSync(dir, { recursive: true });
  const aside = join(dir, `.${list.name}.${process.pid}`);
  writeFileSync(aside, list.data);
  renameSync(aside, join(dir, list.name));
}

/**
 * A copy of the list the sandbox's uid can read (the cache may be under a home it cannot enter), in a directory
 * of its own under the temporary directory, as proc-masks' empty file; `remove` deletes both.
 */
export function stageFontList(list: FontList): { path: string; name: string; remove: () => void } {
  const dir = mkdtempSync(join(sandboxReachableTmpdir(), 'codecall-fonts-'));
  const path = join(dir, list.name);
  writeFileSync(path, list.data);
  chmodSync(path, 0o444);
  chmodSync(dir, 0o755);
  return { path, name: list.name, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
