// The layer diagram (layers.js) holds for every import under src/, type-only ones included, and has no cycles;
// docs/architecture.md shows the same diagram.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { GUEST_FILES, LAYERS } from '../../layers.js';
import { importCycles, importGraph, layerViolations, sourceFiles } from './import-graph.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const graph = importGraph(root, sourceFiles(root));

describe('the layer diagram', () => {
  it('finds the files and their imports', () => {
    expect(graph.size).toBeGreaterThan(100);
    expect(graph.get('src/http/serve.ts')).toContain('src/service/index.ts');
  });

  it('every import of src/ stays inside what its layer may use', () => {
    expect(layerViolations(graph, LAYERS, GUEST_FILES)).toEqual([]);
  });

  it('no import cycles, type-only imports included', () => {
    expect(importCycles(graph)).toEqual([]);
  });

  it('reports a forbidden import, a folder without a layer, a guest import and a type-only cycle', () => {
    const bad = new Map([
      ['src/client/a.ts', ['src/durable/index.ts']],
      ['src/newfolder/b.ts', []],
      ['src/sandbox/quickjs/guest-runtime.ts', ['src/spec/index.ts']],
      ['src/cli/x.ts', ['src/cli/y.ts']],
      ['src/cli/y.ts', ['src/cli/x.ts']],
    ]);
    expect(layerViolations(bad, LAYERS, GUEST_FILES)).toEqual([
      'src/client/a.ts -> src/durable/index.ts: client may not import durable',
      'src/newfolder/b.ts: folder src/newfolder has no layer in layers.js',
      'src/sandbox/quickjs/guest-runtime.ts -> src/spec/index.ts: guest code imports nothing from src/',
    ]);
    expect(importCycles(bad)).toEqual([['src/cli/x.ts', 'src/cli/y.ts']]);
  });

  it('docs/architecture.md lists each layer with exactly what it may import', () => {
    const doc = readFileSync(new URL('../../docs/architecture.md', import.meta.url), 'utf8');
    const rows = new Map<string, string[]>();
    for (const m of doc.matchAll(/^\|\s*`(\w+)\/`\s*\|([^|]*)\|/gm)) {
      const imports = [...(m[2] ?? '').matchAll(/`(\w+)`/g)].map((x) => x[1] ?? '');
      rows.set(m[1] ?? '', imports);
    }
    expect(Object.fromEntries(rows)).toEqual(
      Object.fromEntries(Object.entries(LAYERS).map(([layer, allowed]) => [layer, [...allowed]])),
    );
  });
});
