# Sourced by .ci/run: a throwaway PostgreSQL cluster for the tests, whatever server the machine may run already.
# initdb in a temp dir, pg_ctl on a free loopback port with its socket in that dir, fsync off (the data is thrown
# away), stopped and removed when the shell exits. Exports CODECALL_TEST_POSTGRES_URL (test/global-postgres.ts).

start_test_postgres() {
  local bin
  bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
  if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
    echo "PostgreSQL is not installed (apt-get install postgresql): its tests will be skipped" >&2
    return 0
  fi
  # initdb refuses root: as root the cluster runs as Debian's `postgres` user.
  local as=()
  CODECALL_CI_PG_DIR="$(mktemp -d "${TMPDIR:-/tmp}/codecall-ci-pg.XXXXXX")"
  if [ "$(id -u)" = 0 ]; then
    as=(runuser -u postgres --)
    chown postgres: "$CODECALL_CI_PG_DIR"
  fi
  CODECALL_CI_PG_AS="${as[*]}"
  CODECALL_CI_PG_BIN="$bin"
  trap stop_test_postgres EXIT
  # A signal ends the script through `exit`, so the EXIT trap stops the server.
  trap 'exit 130' INT
  trap 'exit 143' TERM
  "${as[@]}" "$bin/initdb" -D "$CODECALL_CI_PG_DIR/data" --auth=trust --username=postgres --encoding=UTF8 \
    --locale=C --no-sync >/dev/null
  # A port free now; another process could take it before the server binds, so try a few.
  local port tries=0
  until
    port="$(node -e "const s = require('node:net').createServer().listen(0, '127.0.0.1', () => { console.log(s.address().port); s.close(); })")"
    "${as[@]}" "$bin/pg_ctl" -D "$CODECALL_CI_PG_DIR/data" -l "$CODECALL_CI_PG_DIR/server.log" -w -s \
      -o "-p $port -k $CODECALL_CI_PG_DIR -c listen_addresses=127.0.0.1 -c max_connections=300 -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
      start
  do
    tries=$((tries + 1))
    if [ "$tries" -ge 3 ]; then
      cat "$CODECALL_CI_PG_DIR/server.log" >&2
      return 1
    fi
  done
  export CODECALL_TEST_POSTGRES_URL="postgres://postgres@127.0.0.1:$port/postgres"
  echo "PostgreSQL $("$bin/postgres" --version | awk '{print $3}') for the tests at $CODECALL_TEST_POSTGRES_URL"
}

stop_test_postgres() {
  [ -n "${CODECALL_CI_PG_DIR:-}" ] || return 0
  if [ -f "$CODECALL_CI_PG_DIR/data/postmaster.pid" ]; then
    # shellcheck disable=SC2086 # the runuser prefix splits on purpose (empty when not root)
    $CODECALL_CI_PG_AS "$CODECALL_CI_PG_BIN/pg_ctl" -D "$CODECALL_CI_PG_DIR/data" -m immediate -w -s stop || true
  fi
  rm -rf "$CODECALL_CI_PG_DIR"
  CODECALL_CI_PG_DIR=''
}
