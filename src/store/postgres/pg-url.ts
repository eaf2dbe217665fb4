// Apart from the store, so that telling a URL from a path does not load the PostgreSQL client.

/** True for a `postgres://` or `postgresql://` URL (what `--db` takes to mean PostgreSQL). */
export function isPostgresUrl(db: string): boolean {
  return /^postgres(ql)?:\/\//i.test(db);
}

/** The URL without its password, for messages and logs. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password !== '') u.password = '***';
    // libpq also takes the password as a parameter.
    if (u.searchParams.has('password')) u.searchParams.set('password', '***');
    return u.toString();
  } catch {
    return 'postgres://(unparsable URL)';
  }
}
