// search_tools' catalog (ADR 0049): what a query finds, in which order, by pages, with the prompt's declarations.
import { describe, expect, it } from 'vitest';
import { ToolCatalog } from '../../src/mcpserver/index.ts';
import { defineTool } from '../../src/tools/index.ts';

// An MCP server's tools are named `<server>.<tool>` (ADR 0047), which defineTool does not take: named after it.
const tool = (name: string, description: string, properties: Record<string, unknown> = {}) => ({
  ...defineTool({
    name: 'placeholder',
    description,
    input: { type: 'object', properties, additionalProperties: false },
    effect: 'read',
    execute: () => null,
  }),
  name,
});

const tools = [
  tool('get_weather', 'Current weather for a city.', { city: { type: 'string' } }),
  tool('gh.create_issue', 'Opens an issue.', { title: { type: 'string' } }),
  tool('gh.search', 'Search issues by weather words.', { q: { type: 'string' } }),
  ...Array.from({ length: 30 }, (_, i) => tool(`t${i}`, `Tool number ${i}.`)),
];

describe('ToolCatalog', () => {
  const catalog = new ToolCatalog(tools);

  it('an empty query lists every tool in definition order, a page at a time', () => {
    const first = catalog.search({});
    expect(first.total).toBe(33);
    expect(first.tools).toHaveLength(20);
    expect(first.tools[0]?.name).toBe('tools.get_weather');
    expect(first.next_cursor).toBe('20');
    const second = catalog.search({ cursor: first.next_cursor ?? '' });
    expect(second.tools.map((t) => t.name)).toEqual(Array.from({ length: 13 }, (_, i) => `tools.t${i + 17}`));
    expect(second.next_cursor).toBeNull();
  });

  it('ranks a word in the name above one in the description, and gives the declarations', () => {
    const page = catalog.search({ query: 'weather' });
    expect(page.tools.map((t) => t.name)).toEqual(['tools.get_weather', 'tools.gh.search']);
    expect(page.tools[0]?.declaration).toContain('get_weather(args?: { city?: string }): Promise<unknown>;');
    // The page as the prompt declares it: an MCP server's tools as a group.
    expect(page.declarations).toContain('  gh: {\n');
    const py = catalog.search({ query: 'create issue', language: 'python' });
    expect(py.tools[0]?.name).toBe('tools.gh.create_issue');
    expect(py.declarations).toContain('class tools:');
  });

  it('finds nothing for words no tool has, and refuses a cursor it did not give', () => {
    expect(catalog.search({ query: 'zebra' })).toMatchObject({ tools: [], total: 0, next_cursor: null });
    expect(() => catalog.search({ cursor: 'x' })).toThrow(/cursor/);
  });
});
