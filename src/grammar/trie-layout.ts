import type { Vocabulary } from './vocabulary.ts';

/**
 * A set of tokens as a byte trie in preorder: a node's subtree is the nodes after it up to `subtree`, so a byte
 * the grammar refuses skips every token below it in one step.
 */
export class TrieLayout {
  /** Nodes in preorder; node 0 is the root. */
  readonly byte: Uint8Array;
  readonly depth: Uint16Array;
  readonly subtree: Uint32Array;
  /** Tokens ending at node i: tokens[tokenStart[i] .. tokenStart[i + 1]). */
  readonly tokenStart: Uint32Array;
  readonly tokens: Uint32Array;
  /** The deepest node (the longest token's bytes). */
  readonly maxDepth: number;

  constructor(vocabulary: Vocabulary, ids: Iterable<number>) {
    // Build as nested maps, then lay out in preorder with children by byte (deterministic).
    interface Build {
      children: Map<number, Build>;
      tokens: number[];
    }
    const root: Build = { children: new Map(), tokens: [] };
    let nodes = 1;
    for (const id of ids) {
      const bytes = vocabulary.bytes(id);
      if (bytes === null || bytes.length === 0) continue;
      let node = root;
      for (const b of bytes) {
        let next = node.children.get(b);
        if (next === undefined) {
          next = { children: new Map(), tokens: [] };
          node.children.set(b, next);
          nodes++;
        }
        node = next;
      }
      node.tokens.push(id);
    }
    this.byte = new Uint8Array(nodes);
    this.depth = new Uint16Array(nodes);
    this.subtree = new Uint32Array(nodes);
    this.tokenStart = new Uint32Array(nodes + 1);
    const tokens: number[] = [];
    let at = 0;
    let deepest = 0;
    // Iterative preorder (a token may be hundreds of bytes long).
    const stack: { node: Build; byte: number; depth: number }[] = [{ node: root, byte: 0, depth: 0 }];
    const open: number[] = [];
    while (stack.length > 0) {
      const top = stack.pop()!;
      while (open.length > 0 && this.depth[open[open.length - 1]!]! >= top.depth) {
        const done = open.pop()!;
        this.subtree[done] = at - done;
      }
      const i = at++;
      this.byte[i] = top.byte;
      this.depth[i] = top.depth;
      deepest = Math.max(deepest, top.depth);
      this.tokenStart[i] = tokens.length;
      for (const t of top.node.tokens) tokens.push(t);
      open.push(i);
      const children = [...top.node.children].sort((a, b) => b[0] - a[0]);
      for (const [byte, child] of children) stack.push({ node: child, byte, depth: top.depth + 1 });
    }
    while (open.length > 0) {
      const done = open.pop()!;
      this.subtree[done] = at - done;
    }
    this.tokenStart[nodes] = tokens.length;
    this.tokens = Uint32Array.from(tokens);
    this.maxDepth = deepest;
  }

  get nodes(): number {
    return this.byte.length;
  }
}
