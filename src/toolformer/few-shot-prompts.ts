import { CodecallError } from '../errors/index.ts';

/** Where a few-shot prompt takes the text: its last `Input:` line. */
export const PROMPT_INPUT_SLOT = '{input}';

/**
 * The paper's prompts (Schick et al. 2023, appendix A.2 "Prompts") for its Calculator and QA tools, word for word
 * (checked on 2026-12-06 against the paper's ar5iv text and two independent copies; ADR 0052): the instruction as
 * one line, then its Input/Output lines. Its `x` is `{input}`; we add one space after the last `Output:`, where the
 * model's copy of the text begins (call positions are read and calls sampled there). The paper's own footnote
 * writes `<API>`, `</API>` and the arrow as `[`, `]` and `->`, as these prompts do.
 */
export const DEFAULT_FEW_SHOT_PROMPTS: Readonly<Record<string, string>> = {
  Calculator: [
    'Your task is to add calls to a Calculator API to a piece of text. The calls should help you get information required to complete the text. You can call the API by writing "[Calculator(expression)]" where "expression" is the expression to be computed. Here are some examples of API calls:',
    'Input: The number in the next term is 18 + 12 x 3 = 54.',
    'Output: The number in the next term is 18 + 12 x 3 = [Calculator(18 + 12 * 3)] 54.',
    'Input: The population is 658,893 people. This is 11.4% of the national average of 5,763,868 people.',
    'Output: The population is 658,893 people. This is 11.4% of the national average of [Calculator(658,893 / 11.4%)] 5,763,868 people.',
    'Input: A total of 252 qualifying matches were played, and 723 goals were scored (an average of 2.87 per match). This is three times less than the 2169 goals last year.',
    // The paper's Output here does not copy its Input (twenty goals more, 703): kept as printed.
    'Output: A total of 252 qualifying matches were played, and 723 goals were scored (an average of [Calculator(723 / 252)] 2.87 per match). This is twenty goals more than the [Calculator(723 - 20)] 703 goals last year.',
    'Input: I went to Paris in 1994 and stayed there until 2011, so in total, it was 17 years.',
    'Output: I went to Paris in 1994 and stayed there until 2011, so in total, it was [Calculator(2011 - 1994)] 17 years.',
    'Input: From this, we have 4 * 30 minutes = 120 minutes.',
    'Output: From this, we have 4 * 30 minutes = [Calculator(4 * 30)] 120 minutes.',
    `Input: ${PROMPT_INPUT_SLOT}`,
    'Output: ',
  ].join('\n'),
  QA: [
    'Your task is to add calls to a Question Answering API to a piece of text. The questions should help you get information required to complete the text. You can call the API by writing "[QA(question)]" where "question" is the question you want to ask. Here are some examples of API calls:',
    'Input: Joe Biden was born in Scranton, Pennsylvania.',
    'Output: Joe Biden was born in [QA("Where was Joe Biden born?")] Scranton, [QA("In which state is Scranton?")] Pennsylvania.',
    'Input: Coca-Cola, or Coke, is a carbonated soft drink manufactured by the Coca-Cola Company.',
    'Output: Coca-Cola, or [QA("What other name is Coca-Cola known by?")] Coke, is a carbonated soft drink manufactured by [QA("Who manufactures Coca-Cola?")] the Coca-Cola Company.',
    `Input: ${PROMPT_INPUT_SLOT}`,
    'Output: ',
  ].join('\n'),
};

/**
 * A generic prompt in the paper's style for a tool without one of its own: the instruction with the tool's name
 * and description, and no examples (give `prompts` for better ones).
 */
export function genericFewShotPrompt(tool: string, description = ''): string {
  return [
    `Your task is to add calls to a ${tool} API to a piece of text. The calls should help you get information required to complete the text. You can call the API by writing "[${tool}(input)]".${description === '' ? '' : ` ${tool}: ${description.replace(/\s+/g, ' ').slice(0, 500)}`}`,
    `Input: ${PROMPT_INPUT_SLOT}`,
    'Output: ',
  ].join('\n');
}

/**
 * The prompt the text is scored and continued after: the template with the text in its slot, ending where the
 * model's copy of the text begins. A template must hold the slot exactly once.
 */
export function fewShotPrompt(template: string, text: string): string {
  const at = template.indexOf(PROMPT_INPUT_SLOT);
  if (at < 0 || template.indexOf(PROMPT_INPUT_SLOT, at + 1) >= 0) {
    throw new CodecallError(
      'INVALID_ARGUMENT',
      `a few-shot prompt must hold ${PROMPT_INPUT_SLOT} exactly once`,
    );
  }
  // A text with newlines would end its Input line early: written on one line, as the paper's examples are.
  const oneLine = text.replace(/\s*\n\s*/g, ' ');
  return template.slice(0, at) + oneLine + template.slice(at + PROMPT_INPUT_SLOT.length);
}
