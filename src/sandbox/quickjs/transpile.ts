import { transform } from 'sucrase';
import { CodecallError, failure, isCodecallError } from '../../errors/index.ts';
import type { GuestLanguage, SerializedError } from '../../spec/index.ts';

/** A program ready for the VM (wrapped, its types stripped), or why it is not: a SyntaxError as the guest sees it. */
export type PreparedProgram =
  | { readonly ok: true; readonly code: string }
  | { readonly ok: false; readonly error: SerializedError & { line?: number } };

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

/** wrapProgram as data: what does not compile (a language the driver does not run, too) is a SyntaxError. */
export function prepareProgram(code: string, language: GuestLanguage): PreparedProgram {
  try {
    return { ok: true, code: wrapProgram(code, language) };
  } catch (e) {
    const line = isCodecallError(e) ? (e.details.line as number | undefined) : undefined;
    const error = failure(isCodecallError(e) ? e.code : 'SYNTAX_ERROR', (e as Error).message);
    return { ok: false, error: { ...error, name: 'SyntaxError', ...(line === undefined ? {} : { line }) } };
  }
}
