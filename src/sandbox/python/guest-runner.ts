import { GUEST_SITE } from './guest-site.ts';
import { GUEST_VALUES } from './guest-values.ts';
import { GUEST_HOST_CALLS } from './guest-host-calls.ts';
import { GUEST_CLOCK } from './guest-clock.ts';
import { GUEST_DETERMINISM } from './guest-determinism.ts';
import { GUEST_REAPER } from './guest-reaper.ts';
import { GUEST_IMPORTS } from './guest-imports.ts';
import { GUEST_FETCH } from './guest-fetch.ts';
import { GUEST_REQUESTS } from './guest-requests.ts';
import { GUEST_COMPILE } from './guest-compile.ts';
import { GUEST_REPORT } from './guest-report.ts';
import { GUEST_FORK_SERVER } from './guest-fork-server.ts';
import { GUEST_MAIN } from './guest-main.ts';

/**
 * The Python side of the sandbox bridge, run by the sandboxed interpreter (`python3 -c`). It waits on fd 4 for the
 * start message (so a warm pool can start interpreters ahead of use), sets the limits, makes the program
 * deterministic (seeded random, the journaled clock, host-mediated sleeps), defines the tools, runs the program
 * notebook style and reports on fd 3. It trusts nothing the program does after it starts: the host validates every
 * message, and the OS sandbox is the boundary.
 *
 * Protocol (one JSON object per line). Host -> guest: `start {code, tools, seed, clock, limits}`, `outcome {id, ok,
 * payload, clock}`. Guest -> host: `call {id, ns, name, args}`, `timer {id, ms}`, `log {level, message}`, `done {ok,
 * value | error}`. Values are the tagged JSON of src/codec/value-codec.ts (this file has its own copy).
 */
export const GUEST_RUNNER = [
  GUEST_SITE,
  GUEST_VALUES,
  GUEST_HOST_CALLS,
  GUEST_CLOCK,
  GUEST_IMPORTS,
  GUEST_FETCH,
  GUEST_REQUESTS,
  GUEST_REAPER,
  GUEST_DETERMINISM,
  GUEST_COMPILE,
  GUEST_REPORT,
  GUEST_FORK_SERVER,
  GUEST_MAIN,
].join('');
