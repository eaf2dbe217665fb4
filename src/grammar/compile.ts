/** JSON Schema to grammar: the entry point of the schema compiler. */
import { CodecallError } from '../errors/index.ts';
import { CompileContext } from './compile-context.ts';
import type { WhitespacePolicy } from './compile-context.ts';
import { seq } from './ir.ts';
import type { Grammar } from './ir.ts';
import type { GrammarIssue } from './report.ts';
import { compileSchema } from './schema-compile.ts';

export interface SchemaGrammarOptions {
  /** compact: no whitespace between tokens (the default); flexible: any JSON whitespace between tokens. */
  whitespace?: WhitespacePolicy;
  /**
   * What a keyword the grammar cannot enforce does: 'report' (the default) lists it in `issues`; 'error' throws
   * GRAMMAR_UNSUPPORTED with the list in `details.issues`.
   */
  unsupported?: 'report' | 'error';
  /**
   * Other schema documents by URI, for `$ref`s that leave this one ("https://example.com/defs.json#/$defs/a");
   * nothing is fetched, and a ref to a document not given is reported.
   */
  documents?: Readonly<Record<string, unknown>>;
}

export interface SchemaGrammar {
  readonly grammar: Grammar;
  /** The keywords not enforced (in full or in part), with where and why; empty when the grammar is exact. */
  readonly issues: readonly GrammarIssue[];
}

export function schemaToGrammar(schema: unknown, options: SchemaGrammarOptions = {}): SchemaGrammar {
  const ctx = new CompileContext(schema, options.whitespace ?? 'compact', options.documents);
  ctx.compile = (sub, path) => compileSchema(ctx, sub, path);
  const value = compileSchema(ctx, schema, '#');
  const rules = new Map([['root', seq(ctx.ws, value, ctx.ws)], ...ctx.rules]);
  const issues = dedupe(ctx.issues);
  if (options.unsupported === 'error' && issues.length > 0) {
    throw new CodecallError(
      'GRAMMAR_UNSUPPORTED',
      `the grammar cannot enforce: ${[...new Set(issues.map((i) => i.keyword))].join(', ')}`,
      { details: { issues } },
    );
  }
  return { grammar: { root: 'root', rules }, issues };
}

function dedupe(issues: GrammarIssue[]): GrammarIssue[] {
  const seen = new Set<string>();
  return issues.filter((issue) => {
    const key = `${issue.keyword}\u0000${issue.path}\u0000${issue.reason}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
