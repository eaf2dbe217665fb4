/** Runs test-suite style groups (a schema, instances marked valid or not) through the schema compiler and matcher. */
import { isCodecallError } from '../../src/errors/index.ts';
import { compileProgram, schemaToGrammar } from '../../src/grammar/index.ts';
import { declaredOrderCandidates } from './declared-order.ts';
import { matches } from './feed.ts';

export interface SuiteGroup {
  readonly description: string;
  readonly schema: unknown;
  readonly tests: readonly { description: string; data: unknown; valid: boolean }[];
}

export interface SuiteResult {
  total: number;
  compiled: number;
  instances: number;
  mismatches: string[];
  unsupported: Map<string, number>;
}

export function emptyResult(): SuiteResult {
  return { total: 0, compiled: 0, instances: 0, mismatches: [], unsupported: new Map() };
}

/**
 * `flexible`: the schema compiled with flexible whitespace, each instance fed pretty-printed (JSON.stringify with an
 * indent) as well as compact.
 */
export function checkGroup(
  where: string,
  group: SuiteGroup,
  result: SuiteResult,
  flexible = false,
  documents: Readonly<Record<string, unknown>> = {},
): void {
  result.total++;
  let program;
  try {
    const { grammar, issues } = schemaToGrammar(group.schema, {
      whitespace: flexible ? 'flexible' : 'compact',
      documents,
    });
    if (issues.length > 0) {
      for (const keyword of new Set(issues.map((i) => i.keyword))) {
        result.unsupported.set(keyword, (result.unsupported.get(keyword) ?? 0) + 1);
      }
      return;
    }
    program = compileProgram(grammar);
  } catch (error) {
    if (!isCodecallError(error) || !error.code.startsWith('GRAMMAR_')) throw error;
    result.unsupported.set(error.code, (result.unsupported.get(error.code) ?? 0) + 1);
    return;
  }
  result.compiled++;
  for (const test of group.tests) {
    result.instances++;
    const candidates = declaredOrderCandidates(group.schema, group.schema, test.data);
    let accepted: boolean;
    try {
      accepted = candidates.some((candidate) => matches(program, JSON.stringify(candidate)));
      if (flexible) {
        const pretty = candidates.some((candidate) => matches(program, JSON.stringify(candidate, null, 2)));
        if (pretty !== accepted) throw new Error(`${where}: pretty-printed and compact disagree`);
      }
    } catch (error) {
      if (!isCodecallError(error)) throw error;
      result.mismatches.push(`${where} / ${group.description} / ${test.description}: ${error.code}`);
      continue;
    }
    if (accepted !== test.valid) {
      result.mismatches.push(
        `${where} / ${group.description} / ${test.description}: ${test.valid ? 'valid but rejected' : 'invalid but accepted'} ${JSON.stringify(test.data).slice(0, 80)}`,
      );
    }
  }
}

export function summary(name: string, result: SuiteResult): string {
  const share = ((100 * result.compiled) / Math.max(result.total, 1)).toFixed(1);
  const top = [...result.unsupported.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
  return `${name}: ${result.compiled}/${result.total} schemas compiled without a report (${share}%), ${result.instances} instances checked, ${result.mismatches.length} mismatches; reported: ${top}`;
}
