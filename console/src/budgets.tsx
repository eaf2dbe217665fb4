import type { JSX } from 'preact';
import type { BudgetsView } from './types.ts';

interface Row {
  readonly what: string;
  readonly kind: string;
  readonly used: number | null;
  readonly limit: number;
  readonly unit: string;
}

/** The rows of a task's budgets: its own over all tools, then each tool's, with what it used (null: not read). */
function rows(budgets: BudgetsView): Row[] {
  const used = budgets.used;
  const out: Row[] = [];
  if (budgets.max_calls !== undefined) {
    out.push({
      what: 'all tools',
      kind: 'calls',
      used: used?.calls ?? null,
      limit: budgets.max_calls,
      unit: '',
    });
  }
  if (budgets.max_cost !== undefined) {
    out.push({
      what: 'all tools',
      kind: 'cost',
      used: used?.cost ?? null,
      limit: budgets.max_cost,
      unit: '',
    });
  }
  for (const [tool, b] of Object.entries(budgets.tools ?? {})) {
    const u = used ? (used.tools[tool] ?? { calls: 0, wall_seconds: 0 }) : null;
    if (b.max_calls !== undefined) {
      out.push({ what: tool, kind: 'calls', used: u?.calls ?? null, limit: b.max_calls, unit: '' });
    }
    if (b.max_wall_seconds !== undefined) {
      out.push({
        what: tool,
        kind: 'time',
        used: u?.wall_seconds ?? null,
        limit: b.max_wall_seconds,
        unit: ' s',
      });
    }
  }
  return out;
}

/**
 * A task's tool budgets (ADR 0044) and what it used of each, as its journal counts it. A budget used up is marked:
 * its tool's (or every tool's) next call fails with TOOL_BUDGET_EXCEEDED.
 */
export function Budgets(props: { budgets: BudgetsView }): JSX.Element {
  return (
    <div class="table-scroll">
      <table class="budgets" data-testid="budgets">
        <thead>
          <tr>
            <th>Budget</th>
            <th>Used</th>
            <th>Limit</th>
          </tr>
        </thead>
        <tbody>
          {rows(props.budgets).map((r) => {
            const spent = r.used !== null && r.used >= r.limit;
            return (
              <tr key={`${r.what} ${r.kind}`} data-testid="budget" class={spent ? 'spent' : undefined}>
                <td>
                  <span class="mono">{r.what}</span> {r.kind}
                </td>
                <td>{r.used === null ? '–' : `${r.used}${r.unit}`}</td>
                <td>
                  {r.limit}
                  {r.unit}
                  {spent ? ' (used up)' : ''}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
