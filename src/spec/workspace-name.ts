/** A file name a workspace accepts: relative, no `.`/`..` segments, no NUL, at most 255 bytes per segment. */
export function isWorkspaceName(name: string): boolean {
  if (name === '' || name.startsWith('/') || name.includes('\0') || name.includes('\\')) return false;
  if (Buffer.byteLength(name) > 1024) return false;
  return name
    .split('/')
    .every((part) => part !== '' && part !== '.' && part !== '..' && Buffer.byteLength(part) <= 255);
}
