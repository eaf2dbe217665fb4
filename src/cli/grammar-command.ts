import { readFileSync } from 'node:fs';
import { CodecallError } from '../errors/index.ts';
import { grammarToGbnf, grammarToLark, grammarToRegex, schemaToGrammar } from '../grammar/index.ts';
import type { WhitespacePolicy } from '../grammar/index.ts';
import type { CliIo } from './cli-io.ts';
import { EXIT_UNENFORCED } from './exit-codes.ts';

export const GRAMMAR_FORMATS = ['gbnf', 'lark', 'regex'] as const;
export const WHITESPACE_POLICIES = ['compact', 'flexible'] as const;

export interface GrammarCommandOptions {
  readonly format?: string;
  readonly whitespace?: string;
  readonly strict?: boolean;
}

function choice<T extends string>(flag: string, value: string, allowed: readonly T[]): T {
  if ((allowed as readonly string[]).includes(value)) return value as T;
  throw new CodecallError('INVALID_ARGUMENT', `${flag} must be one of ${allowed.join(', ')}`, {
    details: { field: flag.slice(2) },
  });
}

function readSchema(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path === '-' ? 0 : path, 'utf8');
  } catch (error) {
    throw new CodecallError('INVALID_ARGUMENT', `cannot read ${path}: ${(error as Error).message}`, {
      details: { field: 'schema' },
    });
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new CodecallError('GRAMMAR_INVALID_SCHEMA', `${path} is not JSON: ${(error as Error).message}`, {
      details: { field: 'schema' },
    });
  }
}

/**
 * `codecall grammar SCHEMA.json --format gbnf|lark|regex`: prints the schema's grammar on stdout and, on stderr,
 * each keyword the grammar does not enforce. With --strict such a keyword fails the command (nothing printed).
 */
export function grammarCommand(path: string, options: GrammarCommandOptions, io: CliIo): number {
  const format = choice('--format', options.format ?? 'gbnf', GRAMMAR_FORMATS);
  const whitespace = choice<WhitespacePolicy>(
    '--whitespace',
    options.whitespace ?? 'compact',
    WHITESPACE_POLICIES,
  );
  const { grammar, issues } = schemaToGrammar(readSchema(path), { whitespace });
  for (const issue of issues) io.stderr(`not enforced: ${issue.keyword} at ${issue.path}: ${issue.reason}\n`);
  if (options.strict === true && issues.length > 0) {
    io.stderr(`grammar: ${issues.length} keyword(s) not enforced; --strict refuses the schema\n`);
    return EXIT_UNENFORCED;
  }
  const text =
    format === 'gbnf'
      ? grammarToGbnf(grammar)
      : format === 'lark'
        ? grammarToLark(grammar)
        : `${grammarToRegex(grammar)}\n`;
  io.stdout(text);
  return 0;
}
