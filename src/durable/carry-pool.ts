import { canonicalJson } from '../codec/index.ts';
import { originKey } from '../spec/index.ts';
import type { CallOrigin, CarryOffer, CarryOver } from '../spec/index.ts';
import type { Wire } from './journal-wire.ts';

interface Offered {
  readonly offer: CarryOffer;
  readonly key: string;
  /** Its arguments' canonical form, computed when first compared. */
  canonical?: string;
}

/** Arguments compared as data: the same values with keys in another order are the same arguments. */
export function canonicalArgs(args: string): string {
  try {
    return canonicalJson(JSON.parse(args));
  } catch {
    return args;
  }
}

/**
 * The calls earlier attempts completed, as a revision's calls are matched against them (ADR 0034): per tool, in
 * the order the attempts asked for them. Which offers are taken is the journal's (`CallState.carried`), so a
 * replay of the revision matches exactly as its first run did.
 */
export class CarryPool {
  readonly #byTool = new Map<string, Offered[]>();
  readonly #byOrigin = new Map<string, CarryOffer>();
  readonly rerunReads: boolean;

  constructor(carry: CarryOver) {
    this.rerunReads = carry.rerunReads === true;
    for (const offer of carry.offers) {
      let list = this.#byTool.get(offer.tool);
      if (!list) this.#byTool.set(offer.tool, (list = []));
      const key = originKey(offer.origin);
      list.push({ offer, key });
      this.#byOrigin.set(key, offer);
    }
  }

  get size(): number {
    let n = 0;
    for (const list of this.#byTool.values()) n += list.length;
    return n;
  }

  /** The first offer not yet taken of the same tool with the same arguments; null when there is none. */
  match(now: Wire, taken: ReadonlySet<string>): CarryOffer | null {
    const list = this.#byTool.get(now.tool);
    if (!list) return null;
    let canonical: string | undefined;
    for (const o of list) {
      if (taken.has(o.key)) continue;
      if (o.offer.args === now.args) return o.offer;
      canonical ??= canonicalArgs(now.args);
      o.canonical ??= canonicalArgs(o.offer.args);
      if (o.canonical === canonical) return o.offer;
    }
    return null;
  }

  /** The offer of a call taken over from this origin. */
  byOrigin(origin: CallOrigin): CarryOffer | undefined {
    return this.#byOrigin.get(originKey(origin));
  }

  /** The first offer of this tool not yet taken: the earlier call a call with other arguments stands beside. */
  firstOpen(tool: string, taken: ReadonlySet<string>): CarryOffer | null {
    return this.#byTool.get(tool)?.find((o) => !taken.has(o.key))?.offer ?? null;
  }
}
