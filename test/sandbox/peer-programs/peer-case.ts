import type { GuestLanguage } from '../../../src/internal.ts';

/** What a peer's test expects of a program: its result (as JSON shows it), or a failure naming what went wrong. */
export type PeerExpectation =
  | { readonly value: unknown; /** A warning the run must log with it. */ readonly warns?: string }
  | { readonly error: { readonly code?: string; readonly name?: string; readonly message: string | RegExp } };

export interface PeerCase {
  /** The peer's test file the program (or its adaptation) comes from. */
  readonly source: string;
  readonly name: string;
  readonly language: GuestLanguage;
  readonly code: string;
  readonly expect: PeerExpectation;
  /** A known gap: why codecall does not (yet) do what the peer's test expects. Reported as a skip. */
  readonly gap?: string;
}
