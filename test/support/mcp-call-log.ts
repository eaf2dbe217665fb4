// What reached the test MCP server (test/support/mcp-test-server.ts appends `<tool> <json args>` per call to the
// file named by MCP_CALL_LOG), and a wait for a condition on it.
import { readFile } from 'node:fs/promises';

export async function calls(log: string): Promise<string[]> {
  const text = await readFile(log, 'utf8').catch(() => '');
  return text.split('\n').filter((l) => l !== '');
}

export async function until(check: () => Promise<boolean> | boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 20));
  }
}
