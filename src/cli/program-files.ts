import { readFile } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import { CodecallError } from '../errors/index.ts';
import type { GuestLanguage, WorkspaceFile } from '../spec/index.ts';

/** A program's language from its file name: `.py` Python, `.ts`/`.mts`/`.cts` TypeScript, else JavaScript. */
export function languageOfFile(file: string): GuestLanguage {
  const ext = extname(file);
  return ext === '.py' ? 'python' : /\.[cm]?ts$/.test(ext) ? 'typescript' : 'javascript';
}

/** `--file PATH` (repeatable): each file under its base name; two with one name are a usage error. */
export async function inputFiles(paths: readonly string[]): Promise<WorkspaceFile[]> {
  const files: WorkspaceFile[] = [];
  for (const path of paths) {
    const name = basename(path);
    if (files.some((f) => f.name === name)) {
      throw new CodecallError('INVALID_ARGUMENT', `two --file arguments are named ${name}`);
    }
    try {
      files.push({ name, data: new Uint8Array(await readFile(path)) });
    } catch {
      throw new CodecallError('NOT_FOUND', `input file not found: ${path}`);
    }
  }
  return files;
}

/** The program in FILE, or NOT_FOUND naming it. */
export async function programText(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch {
    throw new CodecallError('NOT_FOUND', `program not found: ${file}`);
  }
}
