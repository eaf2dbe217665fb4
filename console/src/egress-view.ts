// How the timeline shows fetch's requests (`egress.read`, `egress.fetch`, issue 21): the method and URL as the
// title, and the response as its status, where it came from and its body as text when it is text, instead of the
// journal's base64.

const PREVIEW_BYTES = 2048;

export function isEgressTool(tool: string): boolean {
  return tool === 'egress.read' || tool === 'egress.fetch';
}

/** `GET https://api.example.com/x` from the request as the guest gave it, or null when it is not one. */
export function egressTitle(args: unknown): string | null {
  if (args === null || typeof args !== 'object') return null;
  const { method, url } = args as { method?: unknown; url?: unknown };
  return typeof method === 'string' && typeof url === 'string' ? `fetch ${method} ${url}` : null;
}

/** The request without its base64 body: headers and the body's size. */
export function egressRequestView(args: unknown): unknown {
  if (args === null || typeof args !== 'object') return args;
  const { body, ...rest } = args as { body?: unknown };
  return typeof body === 'string' ? { ...rest, body_bytes: base64Length(body) } : rest;
}

/** The response as a person reads it: status, final URL, the allow entry, headers, and the body as text. */
export function egressResponseView(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  const r = value as Record<string, unknown>;
  if (typeof r.status !== 'number' || typeof r.body !== 'string') return value;
  const bytes = decode(r.body);
  const { body: _body, ...rest } = r;
  return {
    ...rest,
    body_bytes: bytes.length,
    ...(bytes.length === 0 ? {} : { body: preview(bytes) }),
  };
}

function base64Length(text: string): number {
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  return Math.floor((text.length * 3) / 4) - padding;
}

function decode(text: string): Uint8Array {
  try {
    const raw = atob(text);
    const out = new Uint8Array(raw.length);
    for (let i = 0; i < raw.length; i++) out[i] = raw.charCodeAt(i);
    return out;
  } catch {
    return new Uint8Array(0);
  }
}

/** The first bytes as UTF-8 text, or a note that the body is binary. */
function preview(bytes: Uint8Array): string {
  const head = bytes.subarray(0, PREVIEW_BYTES);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(head, { stream: bytes.length > PREVIEW_BYTES });
  } catch {
    return `(${bytes.length} bytes, not text)`;
  }
  return bytes.length > PREVIEW_BYTES ? `${text}… (${bytes.length} bytes)` : text;
}
