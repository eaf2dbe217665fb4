import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, ERROR_KINDS } from '../../src/errors/index.ts';
import type { ErrorRow } from '../../src/errors/index.ts';

// As fastify does with its errors: the docs' table of codes is the code's table, row for row.
const DOCS = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');

type Cells = Record<string, string>;

/** The rows of the first table under `## heading`, keyed by the header's cells (backticks dropped). */
function table(markdown: string, heading: string): Cells[] {
  const section = markdown.split(/^## /m).find((s) => s.startsWith(`${heading}\n`));
  if (section === undefined) throw new Error(`docs/errors.md has no section "${heading}"`);
  const cells = (line: string): string[] =>
    line
      .slice(1, -1)
      .split('|')
      .map((c) => c.trim().replace(/^`(.*)`$/, '$1'));
  const [header = [], , ...rows] = section
    .split('\n')
    .filter((l) => l.startsWith('|'))
    .map(cells);
  return rows.map((row) => Object.fromEntries(header.map((h, i) => [h, row[i] ?? ''])));
}

const yesNo = (b: boolean): string => (b ? 'yes' : 'no');

/** A row of the code's table as the docs write it (all but the meaning). */
function documented(code: string, row: ErrorRow): Cells {
  return {
    Code: code,
    HTTP: String(row.status),
    Kind: row.kind,
    Retryable: yesNo(row.retryable),
    'Guest name': row.name,
    Pauses: yesNo(row.pauses),
    'Ends agent run': yesNo(row.endsRun),
    Transient: yesNo(row.transient),
    'From guest': yesNo(row.fromGuest),
  };
}

/** Where the docs and the code's table differ: one line per problem, none when they agree. */
function drift(markdown: string, codes: Readonly<Record<string, ErrorRow>>): string[] {
  const problems: string[] = [];
  const rows = table(markdown, 'Codes');
  const seen = new Set<string>();
  for (const cells of rows) {
    const code = cells.Code ?? '';
    if (seen.has(code)) problems.push(`${code}: documented twice`);
    seen.add(code);
    const row = Object.hasOwn(codes, code) ? codes[code] : undefined;
    if (row === undefined) {
      problems.push(`${code}: documented but not in ERROR_CODES`);
      continue;
    }
    for (const [column, value] of Object.entries(documented(code, row))) {
      if (cells[column] !== value)
        problems.push(`${code}: ${column} is ${cells[column]} in the docs, ${value} in the code`);
    }
    if (!cells.Meaning) problems.push(`${code}: no meaning`);
  }
  for (const code of Object.keys(codes)) if (!seen.has(code)) problems.push(`${code}: not documented`);
  return problems;
}

describe('docs/errors.md', () => {
  it('documents every code of ERROR_CODES, with the columns of its row, and no other', () => {
    expect(drift(DOCS, ERROR_CODES)).toEqual([]);
  });

  it('names every column of a row in the table header, then the meaning', () => {
    const header = Object.keys(table(DOCS, 'Codes')[0] ?? {});
    expect(header).toEqual([...Object.keys(documented('X', ERROR_CODES.INTERNAL)), 'Meaning']);
  });

  it('documents every kind, and no other', () => {
    const kinds = table(DOCS, 'Kinds');
    expect(kinds.map((k) => k.Kind)).toEqual([...ERROR_KINDS]);
    for (const k of kinds) expect(k.Meaning, k.Kind).not.toBe('');
  });

  it('reports a code missing from either side and a column that differs', () => {
    const { TIMEOUT: _dropped, ...rest } = ERROR_CODES;
    expect(drift(DOCS, rest)).toEqual(['TIMEOUT: documented but not in ERROR_CODES']);
    const moreCodes = { ...ERROR_CODES, NEW_CODE: ERROR_CODES.INTERNAL };
    expect(drift(DOCS, moreCodes)).toEqual(['NEW_CODE: not documented']);
    const changed = { ...ERROR_CODES, PAUSED: { ...ERROR_CODES.PAUSED, status: 410, pauses: false } };
    expect(drift(DOCS, changed)).toEqual([
      'PAUSED: HTTP is 409 in the docs, 410 in the code',
      'PAUSED: Pauses is yes in the docs, no in the code',
    ]);
  });
});
