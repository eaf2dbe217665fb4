import { CodecallError } from '../errors/index.ts';
import { APPROVER_ROLES } from '../spec/index.ts';
import type { ApprovalPolicy, KeyRole, ToolApproval } from '../spec/index.ts';

const FIELDS = new Set(['roles', 'separation', 'expiresAfterSeconds']);
/** A year: longer is a typo, and the sweep's timers need a bound (long-timeout.ts). */
const MAX_TTL_SECONDS = 31_536_000;

function invalid(tool: string, message: string, field: string): CodecallError {
  return new CodecallError('INVALID_ARGUMENT', `tool ${tool}: approval.${message}`, {
    details: { field: `approval.${field}` },
  });
}

/**
 * Checks a tool's approval policy when the tool is defined (so a bad one fails at load, not at the first call)
 * and returns a frozen copy. A policy on a tool that never needs approval is refused: it would never apply.
 */
export function checkToolApproval(
  tool: string,
  approval: unknown,
  requiresApproval: ApprovalPolicy | undefined,
): ToolApproval {
  if (approval === null || typeof approval !== 'object' || Array.isArray(approval)) {
    throw invalid(tool, 'must be an object { roles, separation, expiresAfterSeconds }', '');
  }
  const record = approval as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (!FIELDS.has(key))
      throw invalid(tool, `${key} is not a field (roles, separation, expiresAfterSeconds)`, key);
  }
  if (requiresApproval === false) {
    throw invalid(tool, 'is given but requiresApproval is false: the policy would never apply', '');
  }
  const { roles, separation, expiresAfterSeconds } = record;
  if (roles !== undefined) {
    if (
      !Array.isArray(roles) ||
      roles.length === 0 ||
      !roles.every((r) => APPROVER_ROLES.includes(r as KeyRole))
    ) {
      throw invalid(tool, `roles must be a non-empty list of ${APPROVER_ROLES.join(', ')}`, 'roles');
    }
  }
  if (separation !== undefined && typeof separation !== 'boolean') {
    throw invalid(tool, 'separation must be a boolean', 'separation');
  }
  if (
    expiresAfterSeconds !== undefined &&
    (typeof expiresAfterSeconds !== 'number' ||
      !Number.isInteger(expiresAfterSeconds) ||
      expiresAfterSeconds < 1 ||
      expiresAfterSeconds > MAX_TTL_SECONDS)
  ) {
    throw invalid(
      tool,
      `expiresAfterSeconds must be a whole number of seconds, 1..${MAX_TTL_SECONDS}`,
      'expiresAfterSeconds',
    );
  }
  return Object.freeze({
    ...(roles === undefined ? {} : { roles: Object.freeze([...new Set(roles as KeyRole[])]) }),
    ...(separation === undefined ? {} : { separation }),
    ...(expiresAfterSeconds === undefined ? {} : { expiresAfterSeconds }),
  });
}
