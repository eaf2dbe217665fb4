import type { CliIo } from './cli-io.ts';

/**
 * What a terminal acts on rather than shows: C0 controls but tab and newline (ESC starts CSI and OSC sequences,
 * OSC 8 links included; BEL, backspace, a CR that overwrites the line), DEL, the C1 controls U+0080-U+009F (CSI
 * is U+009B on its own), and the bidirectional marks and overrides that reorder what is shown.
 */
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** Guest-originated text made safe for a terminal: every such character shows as its escape (`\x1b`, `\u202e`). */
export function safeText(text: string): string {
  return text.replace(UNSAFE, (c) => {
    const n = c.charCodeAt(0);
    return n <= 0xff ? `\\x${n.toString(16).padStart(2, '0')}` : `\\u${n.toString(16).padStart(4, '0')}`;
  });
}

/**
 * The streams a command writes its human-readable output to: stderr always (logs, progress, errors), and stdout
 * unless the command prints JSON there (`--json`), which stays exact.
 */
export function terminalIo(io: CliIo, json: () => boolean): CliIo {
  return {
    stdout: (text) => io.stdout(json() ? text : safeText(text)),
    stderr: (text) => io.stderr(safeText(text)),
  };
}
