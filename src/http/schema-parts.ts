// Pieces the API's response schemas share (schemas.ts, task-view-schema.ts).
import { TASK_TRANSITIONS } from '../spec/index.ts';

/** Every object keeps `additionalProperties: true` (see schemas.ts). */
export const open = { additionalProperties: true } as const;
/** Any JSON value (tool arguments, outputs, metadata values). */
export const anyValue = {} as const;
export const nullable = <T extends string>(type: T) => ({ type: [type, 'null'] as const });
export const timestamp = { type: 'string', description: 'ISO 8601' } as const;
export const status = { type: 'string', enum: Object.keys(TASK_TRANSITIONS) } as const;

/** The mark of a task (or log) that failed the store's check. */
export const corruptMark = {
  ...nullable('object'),
  ...open,
  properties: { code: { type: 'string', enum: ['CHECKPOINT_CORRUPT'] }, message: { type: 'string' } },
} as const;
