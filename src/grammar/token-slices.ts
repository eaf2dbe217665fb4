/**
 * String slices (ADR 0060, after llguidance's): the tokens made only of ordinary JSON string characters (no `"`,
 * no `\`, no control character, whole UTF-8 characters) are most of a vocabulary. Where the grammar takes any
 * such character from a frontier and every one leads to the same next frontier (a string's inside), all of them
 * up to some length are allowed without walking their trie: a precomputed mask covers them.
 */
import { OverBudget } from './frontier-table.ts';
import type { FrontierTable, StackNode } from './frontier-table.ts';

/** Character counts the slices are cut at: tokens of 1..10 characters, 11..30, and longer. */
export const SLICE_CUTS = [10, 30] as const;
/** The level of a frontier that takes ordinary characters without end. */
export const UNBOUNDED = 1 << 30;

/** Whether byte b is an ordinary one-byte string character. */
function ordinaryAscii(b: number): boolean {
  return b >= 0x20 && b < 0x7f && b !== 0x22 && b !== 0x5c;
}

/**
 * The number of characters if `bytes` is a run of ordinary string characters (whole UTF-8 characters, none a
 * surrogate), else -1.
 */
export function ordinaryChars(bytes: Uint8Array): number {
  let chars = 0;
  for (let i = 0; i < bytes.length;) {
    const b = bytes[i]!;
    let extra: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (b < 0x80) {
      if (!ordinaryAscii(b)) return -1;
      extra = 0;
    } else if (b >= 0xc2 && b <= 0xdf) extra = 1;
    else if (b >= 0xe0 && b <= 0xef) {
      extra = 2;
      if (b === 0xe0) lo = 0xa0;
      if (b === 0xed) hi = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      extra = 3;
      if (b === 0xf0) lo = 0x90;
      if (b === 0xf4) hi = 0x8f;
    } else return -1;
    for (let k = 1; k <= extra; k++) {
      const c = bytes[i + k];
      if (c === undefined) return -1;
      if (k === 1 ? c < lo || c > hi : c < 0x80 || c > 0xbf) return -1;
    }
    i += extra + 1;
    chars++;
  }
  return chars;
}

/** UTF-8 lead bytes grouped by what their first continuation byte may be: [first lead, last lead, lo, hi, extra]. */
const LEADS: readonly (readonly [number, number, number, number, number])[] = [
  [0xc2, 0xdf, 0x80, 0xbf, 1],
  [0xe0, 0xe0, 0xa0, 0xbf, 2],
  [0xe1, 0xec, 0x80, 0xbf, 2],
  [0xed, 0xed, 0x80, 0x9f, 2],
  [0xee, 0xef, 0x80, 0xbf, 2],
  [0xf0, 0xf0, 0x90, 0xbf, 3],
  [0xf1, 0xf3, 0x80, 0xbf, 3],
  [0xf4, 0xf4, 0x80, 0x8f, 3],
];

/**
 * The frontiers the ordinary characters lead to from frontier `id`, or null when the grammar refuses one of them.
 * Steps are the table's (kept, or OverBudget past the budget).
 */
function ordinaryTargets(table: FrontierTable, id: number): Set<number> | null {
  const targets = new Set<number>();
  const done = new Set<number>();
  // Continuation bytes lo..hi then `rest` more of 80..BF, from frontier `from`.
  const tail = (from: number, lo: number, hi: number, rest: number): boolean => {
    const full = lo === 0x80 && hi === 0xbf;
    const key = from * 4 + rest;
    if (full && done.has(key)) return true;
    for (let b = lo; b <= hi; b++) {
      const to = table.stepId(from, b, false);
      if (to < 0) return false;
      if (rest === 0) targets.add(to);
      else if (!tail(to, 0x80, 0xbf, rest - 1)) return false;
    }
    if (full) done.add(key);
    return true;
  };
  for (let b = 0x20; b < 0x7f; b++) {
    if (!ordinaryAscii(b)) continue;
    const to = table.stepId(id, b, false);
    if (to < 0) return null;
    targets.add(to);
  }
  for (const [first, last, lo, hi, extra] of LEADS) {
    for (let lead = first; lead <= last; lead++) {
      const to = table.stepId(id, lead, false);
      if (to < 0 || !tail(to, lo, hi, extra - 1)) return null;
    }
  }
  return targets;
}

/** ordinaryTargets, kept per frontier in the table (charged to its budget) when it fits. */
function keptTargets(table: FrontierTable, id: number): Int32Array | null {
  const kept = table.charTargets[id];
  if (kept !== undefined) return kept;
  const targets = ordinaryTargets(table, id);
  const list = targets === null ? null : Int32Array.from(targets);
  table.keepCharTargets(id, list);
  return list;
}

/** Most frontiers one character count may reach in a level's check (a key trie's prefixes, say). */
const MAX_LEVEL_FRONTIERS = 64;

/**
 * How many ordinary characters in a row frontier `id` takes whatever they are: 0, a slice cut, or UNBOUNDED when
 * every frontier they reach was met before (so any number is taken). Kept per frontier in the table; past the
 * budget, 0 (the walk does it instead).
 */
export function sliceLevel(table: FrontierTable, id: number): number {
  const known = table.sliceLevels[id]!;
  if (known >= 0) return known;
  let level = 0;
  try {
    level = projectedLevel(table, id);
    if (level === UNBOUNDED) {
      table.sliceLevels[id] = level;
      return level;
    }
    level = Math.max(level, searchLevel(table, id, MAX_LEVEL_FRONTIERS));
  } catch (error) {
    if (error instanceof OverBudget) return 0;
    throw error;
  }
  table.sliceLevels[id] = level;
  return level;
}

/** Most frontiers a projected level's check may reach: it is kept for every parent, so it may cost more. */
const MAX_PROJECTED_FRONTIERS = 4096;

/**
 * The best level among the frontier's stacks grouped by parent, each group taken with no stack below
 * (FrontierTable.projected): one check for a key's names or a string's count, shared by every place it occurs.
 */
function projectedLevel(table: FrontierTable, id: number): number {
  const { nodes } = table.frontiers[id]!;
  const groups = new Map<number, StackNode[]>();
  for (const node of nodes) {
    if (node.parent === null) continue;
    const key = node.parent.id;
    const group = groups.get(key);
    if (group === undefined) groups.set(key, [node]);
    else group.push(node);
  }
  // One group is the frontier itself but for its parent: its own search is as cheap and as exact.
  if (groups.size < 2) return 0;
  let best = 0;
  // The largest group first: a key trie's stacks are one group beside each declared name's literal.
  for (const group of [...groups.values()].sort((a, b) => b.length - a.length)) {
    const top = table.projected(group);
    if (top === id) continue;
    let level = table.sliceLevels[top]!;
    if (level < 0) {
      level = searchLevel(table, top, MAX_PROJECTED_FRONTIERS);
      table.sliceLevels[top] = level;
    }
    if (level > best) best = level;
    if (best === UNBOUNDED) break;
  }
  return best;
}

/** The level by a breadth-first search over the frontiers ordinary characters reach, up to `mostFrontiers` of them. */
function searchLevel(table: FrontierTable, id: number, mostFrontiers: number): number {
  let level = 0;
  const met = new Set([id]);
  let fresh = [id];
  const most = SLICE_CUTS[SLICE_CUTS.length - 1]!;
  for (let n = 1; n <= most; n++) {
    // Every frontier first met after n - 1 characters takes every character: n characters are taken.
    const next: number[] = [];
    let refused = false;
    for (const from of fresh) {
      const targets = keptTargets(table, from);
      if (targets === null) {
        refused = true;
        break;
      }
      for (const to of targets) {
        if (!met.has(to)) {
          met.add(to);
          next.push(to);
        }
      }
    }
    if (refused || met.size > mostFrontiers) break;
    for (const cut of SLICE_CUTS) if (n === cut) level = cut;
    if (next.length === 0) {
      level = UNBOUNDED;
      break;
    }
    fresh = next;
  }
  return level;
}
