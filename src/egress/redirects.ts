/** The statuses followed (300 and 304 are answers, not redirects). */
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

export function isRedirect(status: number): boolean {
  return REDIRECTS.has(status);
}

/**
 * Whether following `status` turns the request into a GET without a body, as fetch does: 303 for anything but
 * GET and HEAD, 301 and 302 for a POST (what browsers always did). 307 and 308 keep the method and the body.
 */
export function becomesGet(status: number, method: string): boolean {
  if (status === 303) return method !== 'GET' && method !== 'HEAD';
  return (status === 301 || status === 302) && method === 'POST';
}
