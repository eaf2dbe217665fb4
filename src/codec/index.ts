export { EncodedValue, encodeValue, decodeValue, TAG } from './value-codec.ts';
export type { EncodeOptions } from './value-codec.ts';
export { encodeOutcome } from './encode-outcome.ts';
export type { EncodedOutcome } from './encode-outcome.ts';
export { canonicalJson } from './canonical-json.ts';
export { jsonArguments, toJsonView } from './json-view.ts';
export { sha256Hex } from './sha256.ts';
export { assertJsonValue } from './json-value.ts';
