/** See layers.js: what each folder of src/ may import. */
export declare const LAYERS: Readonly<Record<string, readonly string[]>>;
export declare const GUEST_FILES: readonly string[];
