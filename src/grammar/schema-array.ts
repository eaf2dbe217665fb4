/** Arrays: prefixItems (or draft-04/07 `items: [...]`), then `items` (or `additionalItems`), within min/maxItems. */
import type { CompileContext } from './compile-context.ts';
import { EMPTY, lit, NOTHING, opt, rep, seq } from './ir.ts';
import type { Expr } from './ir.ts';
import { pointerJoin } from './report.ts';

type Schema = Record<string, unknown>;

/** Most items a bound may ask for before it is reported instead of built. */
const MAX_ITEMS_BOUND = 10_000;

export function compileArray(ctx: CompileContext, schema: Schema, path: string): Expr {
  let prefixSchemas: unknown[] = [];
  let rest: unknown = true;
  let restAt = pointerJoin(path, 'items');
  if (Array.isArray(schema.prefixItems)) {
    prefixSchemas = schema.prefixItems;
    if (schema.items !== undefined) rest = schema.items;
  } else if (Array.isArray(schema.items)) {
    prefixSchemas = schema.items;
    if (schema.additionalItems !== undefined) rest = schema.additionalItems;
    restAt = pointerJoin(path, 'additionalItems');
  } else if (schema.items !== undefined) rest = schema.items;
  let min = typeof schema.minItems === 'number' ? Math.ceil(schema.minItems) : 0;
  let max = typeof schema.maxItems === 'number' ? Math.floor(schema.maxItems) : Infinity;
  if (min > MAX_ITEMS_BOUND) {
    ctx.report('minItems', path, `over ${MAX_ITEMS_BOUND}`);
    min = 0;
  }
  if (max !== Infinity && max > MAX_ITEMS_BOUND) {
    ctx.report('maxItems', path, `over ${MAX_ITEMS_BOUND}`);
    max = Infinity;
  }
  const prefix = prefixSchemas.map((s, i) =>
    ctx.compile(s, pointerJoin(path, Array.isArray(schema.prefixItems) ? 'prefixItems' : 'items', i)),
  );
  const restItem = ctx.share(ctx.compile(rest, restAt), 'item');
  const k = prefix.length;
  const comma = ctx.comma;
  if (restItem === NOTHING) max = Math.min(max, k);
  const atLeastOne = Math.max(min, 1);
  if (atLeastOne > max) return min === 0 ? seq(lit('['), ctx.ws, lit(']')) : NOTHING;
  // Items from position k on: the repeated `rest`, after a comma if anything came before.
  const tail = (position: number, needed: number, lead: boolean): Expr => {
    const hi = max === Infinity ? Infinity : max - position;
    if (hi <= 0) return needed > 0 ? NOTHING : EMPTY;
    if (lead) return rep(seq(comma, restItem), needed, hi);
    if (needed === 0) return opt(seq(restItem, rep(seq(comma, restItem), 0, hi - 1)));
    return seq(restItem, rep(seq(comma, restItem), needed - 1, hi - 1));
  };
  let body: Expr = tail(k, Math.max(0, atLeastOne - k), k > 0);
  for (let i = k - 1; i >= 0; i--) {
    if (i >= max) continue;
    const item = i === 0 ? prefix[0]! : seq(comma, prefix[i]!);
    body = i < atLeastOne ? seq(item, body) : opt(seq(item, body));
  }
  const ws = ctx.ws;
  const nonEmpty = seq(lit('['), ws, body, ws, lit(']'));
  if (min > 0) return nonEmpty;
  return seq(lit('['), ws, opt(seq(body, ws)), lit(']'));
}
