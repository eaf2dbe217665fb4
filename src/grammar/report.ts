/** What the schema compiler could not enforce, by keyword and place (a JSON pointer into the schema). */
export interface GrammarIssue {
  /** The keyword the grammar does not enforce (in full or in part). */
  readonly keyword: string;
  /** Where: a JSON pointer into the schema document. */
  readonly path: string;
  readonly reason: string;
}

export function pointerJoin(base: string, ...parts: (string | number)[]): string {
  return parts.reduce<string>(
    (at, part) => `${at}/${String(part).replace(/~/g, '~0').replace(/\//g, '~1')}`,
    base,
  );
}
