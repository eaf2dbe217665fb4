// The pure parts of the MCP client (ADR 0047): member names, effects from annotations, `--mcp` flags.
import { describe, expect, it } from 'vitest';
import { checkMcpServers, effectFromAnnotations, memberNames, parseMcpFlag } from '../../src/mcp/index.ts';

describe('MCP naming, effects and flags', () => {
  it('member names are identifiers, distinct, and leave room for Python _async twins', () => {
    expect(
      memberNames(['create-issue', 'create_issue', 'a.b', '9lives', 'then', '__x', 'get', 'get_async']),
    ).toEqual(['create_issue', 'create_issue_2', 'a_b', '_9lives', 'then_', '__x_', 'get', 'get_async_2']);
  });

  it('effects: readOnlyHint read, idempotentHint idempotent, else unsafe', () => {
    expect(effectFromAnnotations({ readOnlyHint: true, idempotentHint: true })).toBe('read');
    expect(effectFromAnnotations({ idempotentHint: true, destructiveHint: true })).toBe('idempotent');
    expect(effectFromAnnotations({ destructiveHint: false })).toBe('unsafe');
    expect(effectFromAnnotations(undefined)).toBe('unsafe');
  });

  it('--mcp NAME=COMMAND ARGS (quotes group words, no shell) and NAME=URL', () => {
    expect(parseMcpFlag(`gh=npx -y "some server" 'a b'c`)).toEqual({
      name: 'gh',
      command: 'npx',
      args: ['-y', 'some server', 'a bc'],
    });
    expect(parseMcpFlag('docs=https://mcp.example.com/mcp')).toEqual({
      name: 'docs',
      url: 'https://mcp.example.com/mcp',
    });
    expect(() => parseMcpFlag('no-equals')).toThrow(/NAME=COMMAND/);
    expect(() => parseMcpFlag('my-server=cmd')).toThrow(/identifier/);
    expect(() =>
      checkMcpServers([
        { name: 'a', command: 'x' },
        { name: 'a', command: 'y' },
      ]),
    ).toThrow(/distinct/);
  });
});
