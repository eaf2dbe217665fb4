/**
 * A list's form of a task's input (ADR 0036): the fields a caller sent that may be big (the program, the
 * instruction, the metadata), each over MAX_LISTED_FIELD_CHARS given by its size, digest and (text) first
 * characters. A store keeps it beside the input when it writes the task, so a page of a list reads this and never
 * the programs: a page costs what it shows.
 */

/** A field of a listed task over this many characters (as JSON; a string: itself) is summarised. */
export const MAX_LISTED_FIELD_CHARS = 4 * 1024;
/** The characters of a summarised string a list still shows. */
export const LISTED_HEAD_CHARS = 256;

/** A summarised field: its UTF-8 bytes and SHA-256 (of the string, or of any other value's JSON) and a text's head. */
export interface FieldDigest {
  readonly bytes: number;
  readonly sha256: string;
  readonly head?: string;
}

/** The input's fields a list summarises. */
export type ListedInputField = 'code' | 'instruction' | 'metadata';

/** The digests of an input's fields over MAX_LISTED_FIELD_CHARS (only those). */
export type ListedInput = { readonly [K in ListedInputField]?: FieldDigest };

/** A field's text as a list measures it: a string itself, any other value its JSON; null when absent. */
export function listedText(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  return typeof value === 'string' ? value : JSON.stringify(value);
}
