/** Feeds text to a fresh matcher byte by byte: matched when every byte is taken and the end is accepting. */
import { GrammarMatcher } from '../../src/grammar/index.ts';
import type { Program } from '../../src/grammar/index.ts';

export function matches(program: Program, text: string): boolean {
  const matcher = new GrammarMatcher(program);
  const bytes = Buffer.from(text, 'utf8');
  return matcher.consumeBytes(bytes) === bytes.length && matcher.isAccepting();
}
