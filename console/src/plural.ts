/** The word for `n` of a thing: `noun(1, 'approval')` is "approval", `noun(2, 'entry', 'entries')` "entries". */
export function noun(n: number, one: string, many = `${one}s`): string {
  return n === 1 ? one : many;
}

/** A count with its word: "1 approval", "2 approvals", "0 tool calls". */
export function plural(n: number, one: string, many?: string): string {
  return `${n} ${noun(n, one, many)}`;
}
