import { transform } from 'sucrase';
import { CodecallError } from '../../errors/index.ts';
import type { GuestLanguage } from '../../spec/index.ts';

/**
 * Wraps a program as the body of an async arrow function (top-level await and return) and strips
 * TypeScript types. The wrapper opens on the program's first line, so line numbers stay the same.
 */
export function wrapProgram(code: string, language: GuestLanguage): string {
  const wrapped = `(async () => {${code}\n})`;
  if (language === 'javascript') return wrapped;
  if (language !== 'typescript') {
    throw new CodecallError('INVALID_ARGUMENT', `the quickjs driver does not run ${language}`);
  }
  try {
    return transform(wrapped, { transforms: ['typescript'], disableESTransforms: true }).code;
  } catch (cause) {
    const message = (cause as Error).message;
    const line = /\((\d+):(\d+)\)/.exec(message)?.[1];
    throw new CodecallError('SYNTAX_ERROR', `SyntaxError: ${message.replace(/\s*\(\d+:\d+\)$/, '')}`, {
      details: line === undefined ? {} : { line: Number(line) },
      cause,
    });
  }
}
