import { errorRow } from '../errors/index.ts';
import type { GuestFailure } from './call-pump.ts';
import { toolNameHint } from './tool-name-hint.ts';
import type { ToolName } from './tool-name-hint.ts';

/** How a guest said it failed, as read off its message: every field unchecked. */
export interface GuestReport {
  readonly code?: unknown;
  readonly name?: unknown;
  readonly message?: unknown;
  readonly details?: unknown;
}

/** What a tool's own code looks like (`E_RATE`, `stripe.card_declined`); anything else is not a code. */
const FOREIGN_CODE = /^[A-Za-z][\w.:-]{0,63}$/;

/**
 * A failure as the guest reported it, with a code the host believes: the guest's own name and message, under
 * GUEST_ERROR unless its code is one a guest may report (`fromGuest` in the error table) or not one of ours (a
 * tool's own code, which no decision reads). A program that claims CANCELLED, APPROVAL_REQUIRED, TIMEOUT or
 * SANDBOX_CRASHED is a program that threw; the code it claimed stays visible in `details.guest_code`. A name not
 * defined that is a tool's is told where the tool is.
 */
export function guestFailure(
  report: GuestReport,
  line?: number,
  column?: number,
  tools: readonly ToolName[] = [],
): GuestFailure {
  const claimed = typeof report.code === 'string' ? report.code : 'GUEST_ERROR';
  const row = errorRow(claimed);
  const believed = row === undefined ? FOREIGN_CODE.test(claimed) : row.fromGuest;
  const details =
    typeof report.details === 'object' && report.details !== null && !Array.isArray(report.details)
      ? (report.details as Record<string, unknown>)
      : undefined;
  const name = typeof report.name === 'string' ? report.name : 'Error';
  const message = typeof report.message === 'string' ? report.message : 'the program failed';
  return {
    code: believed ? claimed : 'GUEST_ERROR',
    name,
    message: toolNameHint(name, message, tools),
    ...(believed
      ? details === undefined
        ? {}
        : { details }
      : { details: { ...details, guest_code: claimed } }),
    ...(line === undefined ? {} : { line }),
    ...(line === undefined || column === undefined ? {} : { column }),
  };
}
