import type { AgentMode, GuestLanguage, NetworkAccess, ToolDefinition, ToolSpec } from '../spec/index.ts';
import { pythonStubs } from './python-stubs.ts';
import { toolDeclarations } from './tool-declarations.ts';

/** The tool a code-mode reply's program runs through, so that every step's feedback answers a tool call. */
export const RUN_CODE_TOOL = 'run_code';

export const RUN_CODE_SPEC: ToolSpec = {
  name: RUN_CODE_TOOL,
  description:
    'Runs a program in the sandbox and returns its console output and value. You may also send the program ' +
    'as a fenced code block in your reply instead of calling this.',
  parameters: {
    type: 'object',
    properties: { code: { type: 'string', description: 'The program.' } },
    required: ['code'],
    additionalProperties: false,
  },
};

/** Where the task's fetch may go, as a rule of the prompt ('' for none). */
function hostsOf(network: NetworkAccess | false): string {
  return network === false ? '' : network.allow.map((h) => `\`${h}\``).join(', ');
}

function codeModePrompt(
  tools: readonly ToolDefinition[],
  language: GuestLanguage,
  network: NetworkAccess | false,
): string {
  const lang = language === 'typescript' ? 'typescript' : 'javascript';
  const declarations = tools.length > 0 ? toolDeclarations(tools) : '// (no tools for this task)';
  return `You solve the user's task by writing ${lang === 'typescript' ? 'TypeScript' : 'JavaScript'} that runs in a sandbox. Each reply is one step: a fenced \`\`\`${lang} code block, which is run; you then see its console output and its value, or its error.

These tools are async functions. Call each with one argument object and await it; they reject with an Error that has \`code\` and \`message\`:
\`\`\`ts
${declarations}
/** Ends the task: \`value\` is the answer. */
declare function final_answer(value: unknown): never;
\`\`\`

Rules:
- Top-level \`await\` works. The value of a step is its last expression (or what it \`return\`s); \`console.log\` prints.
- Top-level variables, functions and classes stay defined in later steps. A step that fails defines nothing new; fix it and send it again.
- Tool calls that completed in a failed step are not repeated: send the fixed step whole, and each call with the same tool and arguments gets its earlier result instead of running again.
- Run independent tool calls together with \`Promise.all\`; they run at the same time.
- Do as much as you can in one step: loops, conditions and data handling belong in code, not in more steps.
${
  network === false
    ? '- There is no network, no file system, no `require` or `import`: only the tools above.'
    : `- \`fetch\` (the standard one: \`await (await fetch(url, init)).json()\`) reaches only ${hostsOf(network)}; a refused request rejects with \`code\` EGRESS_REFUSED. There is no file system, no \`require\` or \`import\`.`
}
- When you know the answer, call \`final_answer(value)\` in code, or reply in plain text without a code block: that text is the answer.`;
}

/**
 * How a Python step runs tool calls at once, as the prompt shows it: a whole program (its import included), for
 * tools `a(x)` and `b(y)`; test/cli-run.test.ts runs it as a model's reply.
 */
export const PYTHON_GATHER_EXAMPLE = `import asyncio

a, b = await asyncio.gather(tools.a_async(x=1), tools.b_async(y=2))`;

/** The python image's libraries (IMAGE_PACKAGES, by the names programs import), as the prompt lists them. */
export const PYTHON_LIBRARIES =
  'numpy, pandas, matplotlib, scipy, scikit-learn (sklearn), openpyxl, tabulate and requests';

function pythonCodeModePrompt(tools: readonly ToolDefinition[], network: NetworkAccess | false): string {
  const stubs = tools.length > 0 ? pythonStubs(tools) : '# (no tools for this task)';
  const fence = '```';
  return `You solve the user's task by writing Python 3 that runs in a sandbox. Each reply is one step: a fenced ${fence}python code block, which is run; you then see what it printed and its value, or its error.

These tools are functions. Call them with keyword arguments; each returns its result or raises ToolError (with \`code\` and \`message\`). Every tool also has an awaitable twin named \`<name>_async\`, and \`asyncio.gather\` runs such calls at the same time (top-level \`await\` works); with two tools \`a\` and \`b\`:
${fence}python
${PYTHON_GATHER_EXAMPLE}
${fence}
The tools:
${fence}python
${stubs}

def final_answer(value: Any) -> None:
    """Ends the task: value is the answer."""
${fence}

Rules:
- The value of a step is its last expression (without one, the last statement's: \`total = a + b\` gives total); \`print\` shows output.
- Variables, functions, classes and imports stay defined in later steps. A step that fails defines nothing new; fix it and send it again.
- Tool calls that completed in a failed step are not repeated: send the fixed step whole, and each call with the same tool and arguments gets its earlier result instead of running again.
- Do as much as you can in one step: loops, conditions and data handling belong in code, not in more steps.
${
  network === false
    ? '- There is no network.'
    : `- \`codecall.fetch(url, method=, headers=, body=)\` (\`import codecall\`; it returns a response with \`status\`, \`text\` and \`json()\`), \`requests\`, \`urllib.request\` and \`http.client\` reach only ${hostsOf(network)}; a refused request raises an error whose \`code\` is EGRESS_REFUSED.`
} Files you were given are in the working directory; files you write there are returned.
- Besides the standard library you can import ${PYTHON_LIBRARIES}; matplotlib draws to files (\`savefig('chart.png')\` in the working directory returns the chart).
- When you know the answer, call \`final_answer(value)\` in code, or reply in plain text without a code block: that text is the answer.`;
}

function functionCallingPrompt(): string {
  return `You solve the user's task by calling the functions you are given. Call several functions in one reply when they do not depend on each other: they run at the same time. A call that fails returns its error; fix the arguments and call again. When you know the answer, reply in plain text without calling a function: that text is the answer.`;
}

export function systemPrompt(
  mode: AgentMode,
  tools: readonly ToolDefinition[],
  language: GuestLanguage,
  network: NetworkAccess | false = false,
): string {
  if (mode !== 'code') return functionCallingPrompt();
  return language === 'python'
    ? pythonCodeModePrompt(tools, network)
    : codeModePrompt(tools, language, network);
}
