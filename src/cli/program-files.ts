import { readFile } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import { CodecallError } from '../errors/index.ts';
import type { GuestLanguage, WorkspaceFile } from '../spec/index.ts';

/** The file name endings of programs, each with the language it is run as. */
export const PROGRAM_EXTENSIONS: Readonly<Record<string, GuestLanguage>> = {
  '.js': 'javascript',
  '.mjs': 'javascript',
  '.cjs': 'javascript',
  '.ts': 'typescript',
  '.mts': 'typescript',
  '.cts': 'typescript',
  '.py': 'python',
};

/**
 * A program's language from its file name (PROGRAM_EXTENSIONS). Any other ending is a usage error naming the
 * known ones: a `.rb` file is not run as JavaScript.
 */
export function languageOfFile(file: string): GuestLanguage {
  const ext = extname(file).toLowerCase();
  const language = Object.hasOwn(PROGRAM_EXTENSIONS, ext) ? PROGRAM_EXTENSIONS[ext] : undefined;
  if (language === undefined) {
    const known = Object.keys(PROGRAM_EXTENSIONS);
    throw new CodecallError(
      'INVALID_ARGUMENT',
      `cannot tell the language of ${basename(file)}: a program file ends in ${known.slice(0, -1).join(', ')} or ${known.at(-1) ?? ''}`,
      { details: { file, supported: known } },
    );
  }
  return language;
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
