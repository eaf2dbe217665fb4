// The parts of mistral-tokenizer-js (no types of its own) the grammar tests use.
declare module 'mistral-tokenizer-js' {
  const mistralTokenizer: {
    /** The 32,000 SentencePiece pieces by id. */
    readonly vocabById: readonly string[];
    encode(prompt: string, addBosToken?: boolean, addPrecedingSpace?: boolean): number[];
    decode(ids: readonly number[], addBosToken?: boolean, addPrecedingSpace?: boolean): string;
  };
  export default mistralTokenizer;
}
