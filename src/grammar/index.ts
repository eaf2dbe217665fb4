export { schemaToGrammar } from './compile.ts';
export type { SchemaGrammar, SchemaGrammarOptions } from './compile.ts';
export type { WhitespacePolicy } from './compile-context.ts';
export type { Expr, Grammar } from './ir.ts';
export type { GrammarIssue } from './report.ts';
export { compileProgram } from './program.ts';
export type { Program, ProgramOptions } from './program.ts';
export { GrammarMatcher } from './matcher.ts';
export type { MatcherOptions, MatchStatus } from './matcher.ts';
