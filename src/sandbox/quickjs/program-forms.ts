import * as acorn from 'acorn';

/**
 * A program runs as the body of an async arrow function: top-level `await` and `return` work. The wrapper opens
 * on the program's first line, so line numbers stay the same (columns on line 1 are off by `OPEN.length`).
 */
export const OPEN = '(async () => {';
export const CLOSE = '\n})';

/** Names the rewrite declares in the wrapper (a program may not declare them at its top level). */
const VALUE = '__cc_value';
const DEFAULT = '__cc_default';

/** One edit the rewrite made: `removed` (the text at `at` of its input) became `inserted`. */
export interface ProgramEdit {
  readonly at: number;
  readonly removed: string;
  readonly inserted: string;
}

export type ProgramForms =
  /** The program to evaluate and the edits that made it from the input (none: the input as it was). */
  | { readonly kind: 'program'; readonly code: string; readonly edits: readonly ProgramEdit[] }
  /** acorn could not parse the input (`at`: where it stopped); QuickJS reports the SyntaxError in its words. */
  | { readonly kind: 'unparsed'; readonly at: number }
  /** The program imports a module (`at`: where), which the sandbox has none of: QuickJS's own words were obscure. */
  | { readonly kind: 'import'; readonly module: string; readonly at: number };

type TopLevel = acorn.Statement | acorn.ModuleDeclaration;

const PARSE_OPTIONS: acorn.Options = { ecmaVersion: 'latest', sourceType: 'script' };

/**
 * Gives a wrapped program (`OPEN + program + CLOSE`, types stripped) the forms other code-mode systems accept,
 * on its parsed form (never on its text):
 *
 * - **Completion value.** Without a top-level `return` (one inside a top-level block, loop or `try` counts), the
 *   value of the last top-level statement, when it is an expression statement, is the result: as a REPL or
 *   `eval` gives it, and as a Python program's last expression is.
 * - **A program that is a function.** When that last expression is a function or arrow expression
 *   (`async () => { ... }`), it is called (with no arguments) and its value is the result; so is a program
 *   that is one function declaration alone (`async function main() { ... }`).
 * - **`export default`.** `export default <function | expression>` (and `export` before a declaration) is
 *   accepted: the default export, called when it is a function, is the result unless the program returns.
 *
 * Edits only insert or replace text on one line, so line numbers never move. With `prelude` (a compiler's
 * output), statements may come before the wrapper; the wrapper must be the last one.
 */
export function programForms(wrapped: string, prelude = false): ProgramForms {
  let statements: readonly TopLevel[];
  let exports = false;
  let body: { end: number };
  try {
    const program = acorn.parse(wrapped, PARSE_OPTIONS);
    const found = wrapperBody(program, wrapped, prelude);
    if (!found) return unchanged(wrapped);
    body = found;
    statements = found.body;
  } catch (cause) {
    const at = parseErrorAt(cause);
    if (!isExportError(cause)) return { kind: 'unparsed', at };
    // `export` is legal only in a module: parse the program alone as one (its offsets move by OPEN.length).
    const module = parseAsModule(wrapped, prelude);
    if (!module) return { kind: 'unparsed', at };
    body = module.body;
    statements = module.statements;
    exports = true;
  }
  const edits: ProgramEdit[] = [];
  const insert = (at: number, text: string): void => void edits.push({ at, removed: '', inserted: text });
  // Before the wrapper's closing line, so that a line comment at the end of the program cannot swallow it.
  const end = body.end - 1;
  const returns = hasTopLevelReturn(statements);
  let defaultName: string | undefined;
  let defaultIsClass = false;
  if (exports) {
    for (const statement of statements) {
      if (statement.type === 'ExportNamedDeclaration' || statement.type === 'ExportDefaultDeclaration') {
        const made = unexport(wrapped, statement, edits);
        if (made === null) return unchanged(wrapped);
        if (made !== undefined) {
          defaultName = made.name;
          defaultIsClass = made.isClass;
        }
      } else if (statement.type === 'ImportDeclaration') {
        return { kind: 'import', module: String(statement.source.value), at: statement.start };
      } else if (statement.type === 'ExportAllDeclaration') {
        return unchanged(wrapped); // QuickJS says an export is not allowed here.
      }
    }
  }
  if (!returns) {
    if (defaultName !== undefined) {
      const value = defaultIsClass
        ? defaultName
        : `typeof ${defaultName} === 'function' ? ${defaultName}() : ${defaultName}`;
      insert(end, `return ${value};`);
    } else {
      completionValue(wrapped, statements, insert, end);
    }
  }
  if (defaultName === DEFAULT) insert(end, ` var ${DEFAULT};`);
  if (edits.length === 0) return unchanged(wrapped);
  return { kind: 'program', code: applyEdits(wrapped, edits), edits: sortEdits(edits) };
}

function unchanged(code: string): ProgramForms {
  return { kind: 'program', code, edits: [] };
}

/** The body of the wrapper arrow, when it holds the whole program (a stray `})` could close it early). */
function wrapperBody(
  program: acorn.Program,
  wrapped: string,
  prelude: boolean,
): acorn.BlockStatement | undefined {
  if (program.body.length !== 1 && !prelude) return undefined;
  const last = program.body.at(-1);
  const arrow = last?.type === 'ExpressionStatement' ? last.expression : undefined;
  if (arrow?.type !== 'ArrowFunctionExpression' || !arrow.async || arrow.params.length > 0) return undefined;
  const body = arrow.body;
  if (body.type !== 'BlockStatement') return undefined;
  if (!prelude && (body.start !== OPEN.length - 1 || body.end !== wrapped.length - 1)) return undefined;
  return body;
}

function parseAsModule(
  wrapped: string,
  prelude: boolean,
): { body: { end: number }; statements: readonly TopLevel[] } | undefined {
  if (prelude || !wrapped.startsWith(OPEN) || !wrapped.endsWith(CLOSE)) return undefined;
  let program: acorn.Program;
  try {
    // The wrapper's text stays (blanked) so that offsets are the wrapped program's.
    const blank = ' '.repeat(OPEN.length) + wrapped.slice(OPEN.length, wrapped.length - CLOSE.length);
    program = acorn.parse(blank, {
      ecmaVersion: 'latest',
      sourceType: 'module',
      allowReturnOutsideFunction: true,
      allowAwaitOutsideFunction: true,
    });
  } catch {
    return undefined;
  }
  return { body: { end: wrapped.length - 1 }, statements: program.body };
}

/**
 * Removes `export` (and `export default`) so the statement runs inside the wrapper. Returns the default export's
 * binding when the statement is `export default`, undefined for another export, and null for one the wrapper
 * cannot hold (`export { a }`, `export ... from`).
 */
function unexport(
  code: string,
  statement: acorn.ExportNamedDeclaration | acorn.ExportDefaultDeclaration,
  edits: ProgramEdit[],
): { name: string; isClass: boolean } | undefined | null {
  const declaration = statement.declaration;
  if (!declaration) return null;
  const keyword = code.slice(statement.start, declaration.start);
  if (statement.type === 'ExportNamedDeclaration') {
    edits.push({ at: statement.start, removed: keyword, inserted: '' });
    return undefined;
  }
  const isDeclaration = declaration.type === 'FunctionDeclaration' || declaration.type === 'ClassDeclaration';
  const isClass = declaration.type === 'ClassDeclaration' || declaration.type === 'ClassExpression';
  const id = isDeclaration ? (declaration as { id?: acorn.Identifier | null }).id : undefined;
  if (id) {
    // `export default async function main() {}`: the declaration stays, and so does its name.
    edits.push({ at: statement.start, removed: keyword, inserted: '' });
    return { name: id.name, isClass };
  }
  // Declared where the wrapper ends (`var` is hoisted): QuickJS places no error inside a declaration's initializer.
  edits.push({ at: statement.start, removed: keyword, inserted: `${DEFAULT} = ` });
  // An anonymous function or class declaration became an expression: end its statement.
  if (isDeclaration || code[statement.end - 1] !== ';') {
    edits.push({ at: statement.end, removed: '', inserted: ';' });
  }
  return { name: DEFAULT, isClass };
}

/** The last statement's value as the result; a function (expression, or declaration alone) is called. */
function completionValue(
  code: string,
  statements: readonly TopLevel[],
  insert: (at: number, text: string) => void,
  end: number,
): void {
  // `export async function main() {}` counts as the declaration it exports (the keyword is removed).
  const meaningful = statements
    .map((s) => (s.type === 'ExportNamedDeclaration' && s.declaration ? s.declaration : s))
    .filter((s) => s.type !== 'EmptyStatement');
  const last = meaningful.at(-1);
  if (!last) return;
  if (last.type === 'FunctionDeclaration' && !last.generator) {
    const others = meaningful.filter((s) => s !== last && !isDirective(s));
    if (others.length === 0) insert(end, `return ${last.id.name}();`);
    return;
  }
  if (last.type !== 'ExpressionStatement') return;
  const expression = last.expression;
  const call =
    expression.type === 'ArrowFunctionExpression' ||
    (expression.type === 'FunctionExpression' && !expression.generator);
  // The statement's own text (parentheses included), without its semicolon. Assigned, neither returned nor
  // declared with it: QuickJS places an error inside a `return` or a declaration at the start of the function.
  const close = code[last.end - 1] === ';' ? last.end - 1 : last.end;
  insert(last.start, `${VALUE} = (`);
  insert(close, call ? ')()' : ')');
  insert(last.end, `${code[last.end - 1] === ';' ? '' : ';'} return ${VALUE}; var ${VALUE};`);
}

function isDirective(statement: TopLevel | acorn.Declaration): boolean {
  return statement.type === 'ExpressionStatement' && statement.directive !== undefined;
}

/** Whether a `return` leaves the wrapper: one at its top level, or in a block, loop, `if`, `try` or `switch`. */
function hasTopLevelReturn(statements: readonly TopLevel[]): boolean {
  // Iterative: a program nested deeply enough to overflow a recursive walk already failed to parse.
  const stack: (TopLevel | null | undefined)[] = [...statements];
  while (stack.length > 0) {
    const s = stack.pop();
    if (!s) continue;
    switch (s.type) {
      case 'ReturnStatement':
        return true;
      case 'BlockStatement':
        stack.push(...s.body);
        break;
      case 'IfStatement':
        stack.push(s.consequent, s.alternate);
        break;
      case 'ForStatement':
      case 'ForInStatement':
      case 'ForOfStatement':
      case 'WhileStatement':
      case 'DoWhileStatement':
      case 'LabeledStatement':
      case 'WithStatement':
        stack.push(s.body);
        break;
      case 'TryStatement':
        stack.push(s.block, s.handler?.body, s.finalizer);
        break;
      case 'SwitchStatement':
        for (const c of s.cases) stack.push(...c.consequent);
        break;
      default:
        break;
    }
  }
  return false;
}

function isExportError(cause: unknown): boolean {
  return cause instanceof SyntaxError && /'import' and 'export' may (only )?appear/.test(cause.message);
}

function parseErrorAt(cause: unknown): number {
  const pos = (cause as { pos?: unknown }).pos;
  return typeof pos === 'number' ? pos : -1;
}

function sortEdits(edits: readonly ProgramEdit[]): ProgramEdit[] {
  // Stable: edits at the same place keep the order they were made in.
  return edits
    .map((e, i) => ({ e, i }))
    .sort((a, b) => a.e.at - b.e.at || a.i - b.i)
    .map(({ e }) => e);
}

/** `code` with `edits` applied (edits at the same place apply in the order they were made). */
export function applyEdits(code: string, edits: readonly ProgramEdit[]): string {
  let out = '';
  let pos = 0;
  for (const e of sortEdits(edits)) {
    out += code.slice(pos, e.at) + e.inserted;
    pos = e.at + e.removed.length;
  }
  return out + code.slice(pos);
}
