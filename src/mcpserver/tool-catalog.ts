import { pythonStubs, toolDeclarations } from '../agent/index.ts';
import { CodecallError } from '../errors/index.ts';
import type { ToolDefinition } from '../spec/index.ts';

/** One tool as search_tools gives it: how a program calls it, what it does, its declaration. */
export interface CatalogEntry {
  /** How a program calls it: `tools.get_weather`, `tools.gh.create_issue`. */
  readonly name: string;
  readonly description: string;
  readonly effect: string;
  readonly requires_approval: boolean;
  /** Its TypeScript declaration (or Python stub) exactly as the code-mode prompt gives it. */
  readonly declaration: string;
}

export interface CatalogPage {
  readonly tools: readonly CatalogEntry[];
  /** Tools that match (on every page). */
  readonly total: number;
  /** Give it as `cursor` for the next page; null: this was the last. */
  readonly next_cursor: string | null;
  /** The page's declarations as one block, as the prompt would declare these tools. */
  readonly declarations: string;
}

export interface CatalogQuery {
  readonly query?: string;
  readonly limit?: number;
  readonly cursor?: string;
  readonly language?: 'typescript' | 'python';
}

export const DEFAULT_SEARCH_LIMIT = 20;
export const MAX_SEARCH_LIMIT = 100;

interface Indexed {
  readonly tool: ToolDefinition;
  readonly name: string;
  /** Lower-cased: the name's words, the description, the declaration (its parameters and their docs). */
  readonly nameText: string;
  readonly bodyText: string;
}

/**
 * The tools search_tools searches (ADR 0049): names, descriptions and declarations, made once. A query is words;
 * a tool matches when a word is in its name, description or declaration, ranked by how many are (those in its
 * name count most).
 * An empty query lists every tool in definition order. Pages by an offset cursor.
 */
export class ToolCatalog {
  private readonly indexed: readonly Indexed[];

  constructor(tools: readonly ToolDefinition[]) {
    this.indexed = tools.map((tool) => {
      const name = `${tool.namespace}.${tool.name}`;
      return {
        tool,
        name,
        nameText: name.toLowerCase().replace(/[._]/g, ' '),
        bodyText: `${tool.description}\n${toolDeclarations([tool])}`.toLowerCase(),
      };
    });
  }

  get size(): number {
    return this.indexed.length;
  }

  search(q: CatalogQuery): CatalogPage {
    const limit = q.limit ?? DEFAULT_SEARCH_LIMIT;
    const offset = q.cursor === undefined ? 0 : Number(q.cursor);
    if (!Number.isSafeInteger(offset) || offset < 0) {
      throw new CodecallError('INVALID_ARGUMENT', 'cursor: give the next_cursor of the previous page', {
        details: { field: 'cursor' },
      });
    }
    const words = (q.query ?? '')
      .toLowerCase()
      .split(/[\s,;:._]+/)
      .filter((w) => w !== '');
    const matched =
      words.length === 0
        ? [...this.indexed]
        : this.indexed
            .map((entry, order) => ({ entry, order, score: score(entry, words) }))
            .filter((m) => m.score > 0)
            .sort((a, b) => b.score - a.score || a.order - b.order)
            .map((m) => m.entry);
    const page = matched.slice(offset, offset + limit).map((m) => m.tool);
    const python = q.language === 'python';
    const declare = (list: readonly ToolDefinition[]) =>
      list.length === 0 ? '' : python ? pythonStubs(list) : toolDeclarations(list);
    return {
      tools: page.map((tool) => ({
        name: `${tool.namespace}.${tool.name}`,
        description: tool.description,
        effect: tool.effect,
        requires_approval: tool.requiresApproval !== false,
        declaration: declare([tool]),
      })),
      total: matched.length,
      next_cursor: offset + limit < matched.length ? String(offset + limit) : null,
      declarations: declare(page),
    };
  }
}

/** 3 for each word in the name (names say what a tool is), 1 for each only in its description or declaration. */
function score(entry: Indexed, words: readonly string[]): number {
  let total = 0;
  for (const word of words) {
    if (entry.nameText.includes(word)) total += 3;
    else if (entry.bodyText.includes(word)) total += 1;
  }
  return total;
}
