import { programSource } from '../spec/index.ts';
import type { TaskInput } from '../spec/index.ts';
import { canonicalJson, sha256Hex } from './journal-checksum.ts';

/** The data of a task's first journal entry (`task_input`): digests of what it runs, never the program itself. */
export function taskInputEntryData(input: TaskInput): {
  code_hash: string;
  tools_hash: string;
  language: TaskInput['language'];
  seed: TaskInput['seed'];
  limits: TaskInput['limits'] | null;
} {
  return {
    code_hash: sha256Hex(programSource(input)),
    tools_hash: sha256Hex(canonicalJson(input.tools ?? null)),
    language: input.language,
    seed: input.seed,
    limits: input.limits ?? null,
  };
}
