export { EncodedValue, encodeValue, decodeValue, TAG } from './value-codec.ts';
export type { EncodeOptions } from './value-codec.ts';
