// What the wire's snake_case forms and the runtime's camelCase ones share: key renaming, and the tighter of two
// optional bounds.
import { isRecord } from './is-record.ts';

/** An object's keys renamed by `names` (those it does not name kept); anything else as it is, for a check to refuse. */
export function renamedKeys(value: unknown, names: Readonly<Record<string, string>>): unknown {
  if (!isRecord(value)) return value;
  return Object.fromEntries(Object.entries(value).map(([k, x]) => [names[k] ?? k, x]));
}

/** The names the other way round. */
export function invertedNames(names: Readonly<Record<string, string>>): Readonly<Record<string, string>> {
  return Object.fromEntries(Object.entries(names).map(([from, to]) => [to, from]));
}

/** The tighter of two optional bounds; undefined when neither sets one. */
export function smaller(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined ? b : b === undefined ? a : Math.min(a, b);
}
