import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative, sep } from 'node:path';
import ts from 'typescript';

/** Every `.ts` file under `dir`, as a path relative to `root` with forward slashes. */
export function sourceFiles(root: string, dir = 'src'): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) out.push(...sourceFiles(root, path));
    else if (entry.name.endsWith('.ts')) out.push(path);
  }
  return out.sort();
}

/** The relative imports of each file (static, type-only, re-exports and dynamic `import()`), resolved to paths. */
export function importGraph(root: string, files: readonly string[]): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const info = ts.preProcessFile(readFileSync(join(root, file), 'utf8'), true, true);
    const targets = info.importedFiles
      .map((i) => i.fileName)
      .filter((name) => name.startsWith('.'))
      .map((name) =>
        normalize(join(dirname(file), name))
          .split(sep)
          .join('/'),
      );
    graph.set(file, targets);
  }
  return graph;
}

/** The layer of a file under src/: its top folder (`src/index.ts` and other top files are the root). */
export function layerOf(file: string): string {
  const parts = relative('src', file).split(/[\\/]/);
  return parts.length === 1 ? '(root)' : (parts[0] ?? '(root)');
}

/** Imports that cross into a layer the importing layer may not use, and files in folders without a layer. */
export function layerViolations(
  graph: ReadonlyMap<string, readonly string[]>,
  layers: Readonly<Record<string, readonly string[]>>,
  guestFiles: readonly string[] = [],
): string[] {
  const out: string[] = [];
  for (const [file, targets] of graph) {
    const from = layerOf(file);
    if (from === '(root)') continue;
    const allowed = layers[from];
    if (!allowed) {
      out.push(`${file}: folder src/${from} has no layer in layers.js`);
      continue;
    }
    for (const target of targets) {
      if (guestFiles.includes(file) && target.startsWith('src/')) {
        out.push(`${file} -> ${target}: guest code imports nothing from src/`);
        continue;
      }
      const to = layerOf(target);
      if (to !== from && !allowed.includes(to))
        out.push(`${file} -> ${target}: ${from} may not import ${to}`);
    }
  }
  return out;
}

/** Strongly connected groups of more than one file (or a file importing itself): import cycles. */
export function importCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  let next = 0;
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next += 1;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) ?? 0, low.get(w) ?? 0));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v) ?? 0, index.get(w) ?? 0));
      }
    }
    if (low.get(v) === index.get(v)) {
      const group: string[] = [];
      for (let w = stack.pop(); w !== undefined; w = stack.pop()) {
        onStack.delete(w);
        group.push(w);
        if (w === v) break;
      }
      if (group.length > 1 || (graph.get(v) ?? []).includes(v)) cycles.push(group.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return cycles;
}
