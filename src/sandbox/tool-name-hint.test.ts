import { describe, expect, it } from 'vitest';
import { toolNameHint } from './tool-name-hint.ts';

describe('toolNameHint', () => {
  const tools = [{ namespace: 'tools', name: 'get_weather' }];
  it('tells a program that called a tool by its bare name where the tool is', () => {
    expect(toolNameHint('NameError', "name 'get_weather' is not defined", tools)).toBe(
      "name 'get_weather' is not defined (it is a tool: call it as tools.get_weather(...))",
    );
    expect(toolNameHint('ReferenceError', 'get_weather is not defined', tools)).toContain(
      'tools.get_weather(...)',
    );
  });
  it('leaves other names and other errors alone', () => {
    expect(toolNameHint('NameError', "name 'x' is not defined", tools)).toBe("name 'x' is not defined");
    expect(toolNameHint('TypeError', 'get_weather is not defined', tools)).toBe('get_weather is not defined');
  });
});
