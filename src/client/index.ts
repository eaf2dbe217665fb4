export { createClient } from './create-client.ts';
export { readSse } from './sse-reader.ts';
export type { SseMessage } from './sse-reader.ts';
export type * from './client-types.ts';
