import { describe, expect, it } from 'vitest';
import {
  chatFormLine,
  chatFormRecord,
  escapeInline,
  findInlineCall,
  inlineFormLine,
  MAX_INLINE_CALL_CHARS,
  parseInlineCall,
  prefixWithCall,
  renderInlineCall,
  type InlineCall,
} from '../../src/toolformer/index.ts';

describe('the inline form', () => {
  it("writes the paper's calls, with and without a result", () => {
    expect(renderInlineCall({ tool: 'Calculator', input: '400/1400', result: '0.29' })).toBe(
      '[Calculator(400/1400) -> 0.29]',
    );
    expect(renderInlineCall({ tool: 'Calculator', input: '400/1400', result: '' })).toBe(
      '[Calculator(400/1400) -> ]',
    );
    expect(renderInlineCall({ tool: 'QA', input: '"Where was Joe Biden born?"' })).toBe(
      '[QA("Where was Joe Biden born?")]',
    );
  });

  it('reads back what it writes, escapes included', () => {
    const calls: InlineCall[] = [
      { tool: 'Calculator', input: '400/1400', result: '0.29' },
      { tool: 'Calculator', input: '(2+3)*(4-1)', result: '15' },
      { tool: 'Calculator', input: '1400', result: '' },
      { tool: 'QA', input: 'a -> b ] [c] \\ d', result: 'x -> y ] \\]' },
      { tool: 'QA', input: 'x)', result: ' leading space, trailing ) ' },
      { tool: 'mcp.search-docs', input: '' },
      { tool: 'WikiSearch', input: 'arrow at the end ->', result: '->' },
    ];
    for (const call of calls) {
      const text = renderInlineCall(call);
      expect(parseInlineCall(text)).toEqual({ call, end: text.length });
      const inText = `before ${text} after`;
      expect(findInlineCall(inText)).toEqual({ call, start: 7, end: 7 + text.length });
    }
    expect(escapeInline('a->b]\\[')).toBe('a\\->b\\]\\\\\\[');
    expect(escapeInline('a - > b')).toBe('a - > b');
  });

  it('finds no call in text that only looks like one', () => {
    for (const text of [
      '[not a call]',
      '[Calculator 400/1400]',
      '[Calculator(400/1400',
      '[Calculator(400/1400) -> 0.29',
      '[Calculator(400/1400) oops]',
      '[Calculator(1) -> 2 -> 3]',
      '[Calculator(1 [nested] ) -> 2]',
      '[1abc(x)]',
      '[Calculator(x) -> 2\\',
    ]) {
      expect(parseInlineCall(text), text).toBeNull();
      expect(findInlineCall(text), text).toBeNull();
    }
    // A stray `[` does not read on for ever, and the next `[` is still looked at.
    const long = `[Calculator(${'x'.repeat(MAX_INLINE_CALL_CHARS)}) -> 1] [QA(q) -> a]`;
    expect(findInlineCall(long)?.call).toEqual({ tool: 'QA', input: 'q', result: 'a' });
  });

  it('puts the call after the text before it, one space apart, and writes a JSONL line', () => {
    const call = { tool: 'Calculator', input: '400/1400', result: '0.29' };
    expect(prefixWithCall('Out of 1400 participants, 400 (or', call)).toBe(
      'Out of 1400 participants, 400 (or [Calculator(400/1400) -> 0.29]',
    );
    expect(prefixWithCall('ends in a space ', call)).toBe('ends in a space [Calculator(400/1400) -> 0.29]');
    const line = inlineFormLine({
      prefix: 'Out of 1400 participants, 400 (or',
      continuation: ' 29%) passed the test.',
      ...call,
    });
    expect(line).toBe(
      '{"text":"Out of 1400 participants, 400 (or [Calculator(400/1400) -> 0.29] 29%) passed the test."}',
    );
    expect(() => renderInlineCall({ tool: 'no spaces', input: '' })).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
    );
  });
});

describe('the chat form', () => {
  const sample = {
    prefix: 'Out of 1400 participants, 400 (or',
    continuation: ' 29%) passed the test.',
    tool: 'Calculator',
    input: '400/1400',
    arguments: { expression: '400/1400' },
    result: '0.29',
  };

  it("is OpenAI's chat fine-tuning record: the text, the tool call, the tool's message, the continuation", () => {
    const tools = [
      {
        name: 'Calculator',
        description: 'Evaluates arithmetic',
        parameters: {
          type: 'object',
          properties: { expression: { type: 'string' } },
          required: ['expression'],
        },
      },
    ];
    expect(chatFormRecord(sample, { system: 'You may call tools.', tools })).toEqual({
      messages: [
        { role: 'system', content: 'You may call tools.' },
        { role: 'user', content: 'Out of 1400 participants, 400 (or' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'call_1',
              type: 'function',
              function: { name: 'Calculator', arguments: '{"expression":"400/1400"}' },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '0.29' },
        { role: 'assistant', content: ' 29%) passed the test.' },
      ],
      tools: [
        {
          type: 'function',
          function: {
            name: 'Calculator',
            description: 'Evaluates arithmetic',
            parameters: {
              type: 'object',
              properties: { expression: { type: 'string' } },
              required: ['expression'],
            },
          },
        },
      ],
    });
  });

  it('takes the inline input as `{ input }` when no arguments are given, and is one line of JSONL', () => {
    const { arguments: _, ...bare } = sample;
    const line = chatFormLine({ ...bare, prefix: 'line one\nline two' }, { toolCallId: 'abc123XYZ' });
    expect(line).not.toContain('\n');
    const record = JSON.parse(line) as { messages: { tool_calls?: unknown[]; tool_call_id?: string }[] };
    expect(record.messages[1]?.tool_calls).toEqual([
      {
        id: 'abc123XYZ',
        type: 'function',
        function: { name: 'Calculator', arguments: '{"input":"400/1400"}' },
      },
    ]);
    expect(record.messages[2]?.tool_call_id).toBe('abc123XYZ');
    expect(record).not.toHaveProperty('tools');
  });
});
