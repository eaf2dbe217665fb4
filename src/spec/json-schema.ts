/** A JSON Schema document (draft 2020-12 or 07); validated with ajv on the host. */
export type JsonSchema = Record<string, unknown>;
