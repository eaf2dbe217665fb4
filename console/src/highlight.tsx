import type { JSX } from 'preact';

// A tiny tokenizer for JS/TS/Python: comments, strings, numbers and keywords get a class; the rest is text.
// Enough to read a program at a glance; not a parser.

const JS_KEYWORDS = new Set(
  (
    'async await break case catch class const continue default delete do else export extends false finally for ' +
    'from function if import in instanceof interface let new null of return static switch this throw true try ' +
    'type typeof undefined var void while yield as enum implements private public readonly'
  ).split(' '),
);
const PY_KEYWORDS = new Set(
  (
    'False None True and as assert async await break class continue def del elif else except finally for from ' +
    'global if import in is lambda nonlocal not or pass raise return try while with yield print'
  ).split(' '),
);

type Kind = 'comment' | 'string' | 'number' | 'keyword' | 'text';

const JS_TOKEN =
  /(\/\/[^\n]*|\/\*[\s\S]*?\*\/)|(`(?:\\[\s\S]|[^\\`])*`|'(?:\\.|[^\\'\n])*'|"(?:\\.|[^\\"\n])*")|(\b\d[\d_]*(?:\.\d+)?(?:e[+-]?\d+)?\b)|([A-Za-z_$][\w$]*)/g;
const PY_TOKEN =
  /(#[^\n]*)|("""[\s\S]*?"""|'''[\s\S]*?'''|[rbfu]{0,2}'(?:\\.|[^\\'\n])*'|[rbfu]{0,2}"(?:\\.|[^\\"\n])*")|(\b\d[\d_]*(?:\.\d+)?(?:e[+-]?\d+)?\b)|([A-Za-z_][\w]*)/g;

export function tokenize(code: string, language: string): { kind: Kind; text: string }[] {
  const python = language === 'python';
  const re = new RegExp(python ? PY_TOKEN : JS_TOKEN);
  const keywords = python ? PY_KEYWORDS : JS_KEYWORDS;
  const out: { kind: Kind; text: string }[] = [];
  let at = 0;
  for (let m = re.exec(code); m; m = re.exec(code)) {
    if (m.index > at) out.push({ kind: 'text', text: code.slice(at, m.index) });
    const [text, comment, string, number, word] = m;
    const kind: Kind = comment
      ? 'comment'
      : string
        ? 'string'
        : number
          ? 'number'
          : word && keywords.has(word)
            ? 'keyword'
            : 'text';
    out.push({ kind, text });
    at = m.index + text.length;
  }
  if (at < code.length) out.push({ kind: 'text', text: code.slice(at) });
  return out;
}

export function Code(props: { code: string; language: string; testid?: string }): JSX.Element {
  return (
    <pre class="code" data-testid={props.testid} data-language={props.language}>
      <code>
        {tokenize(props.code, props.language).map((t, i) =>
          t.kind === 'text' ? (
            t.text
          ) : (
            <span key={i} class={`tok-${t.kind}`}>
              {t.text}
            </span>
          ),
        )}
      </code>
    </pre>
  );
}
