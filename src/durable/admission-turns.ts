import type { HostOutcome } from '../spec/index.ts';

/**
 * New calls admitted in call order while one of them waits for a store round trip (its tenant's limits, ADR
 * 0045): the budgets count each intent as it is journaled, so the next call may only be admitted once the one
 * before it has journaled its intent (or its refusal). Without a round trip under way, nothing waits here.
 */
export class AdmissionTurns {
  /** Settles once the last call given a turn has journaled its intent; null: no turn is under way. */
  #last: Promise<void> | null = null;

  /** Whether a call's admission is under way (a new call must then take its turn). */
  get busy(): boolean {
    return this.#last !== null;
  }

  /**
   * Runs `decide` once the calls before have journaled their intents, then the step it decided, whose intent (if
   * any) is journaled before it first waits: only then does the next turn begin.
   */
  take(decide: () => Promise<() => Promise<HostOutcome>>): Promise<HostOutcome> {
    const before = this.#last ?? Promise.resolve();
    let release = (): void => undefined;
    const turn = new Promise<void>((resolve) => (release = resolve));
    this.#last = turn;
    const run = async (): Promise<HostOutcome> => {
      await before;
      try {
        const next = await decide();
        return next();
      } finally {
        release();
        if (this.#last === turn) this.#last = null;
      }
    };
    return run();
  }
}
