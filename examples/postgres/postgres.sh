# examples/postgres/postgres.sh, sourced by check.sh and bench/postgres.sh: a PostgreSQL server of
# a script's own, in a folder of its own, on a free port of 127.0.0.1, with fsync off.
#
#   find_postgres          sets bindir to the folder of the server's programs; fails without one
#   start_postgres FOLDER  runs initdb in FOLDER and starts the server there; sets port and
#                          postgres_pid, the server's own pid (runuser's would not pass a signal on)
#   stop_postgres          a fast stop, then waits for the server to be gone; safe to call twice

find_postgres() {
  bindir=""
  local dir
  for dir in "$(pg_config --bindir 2>/dev/null || true)" /usr/lib/postgresql/*/bin; do
    if [ -x "$dir/initdb" ] && [ -x "$dir/postgres" ]; then bindir=$dir; fi
  done
  [ -n "$bindir" ]
}

# run_as_postgres runs a command as the user postgres when the script runs as root: initdb and
# postgres refuse to run as root.
run_as_postgres() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

postgres_pid=""
start_postgres() {
  local folder=$1 candidate
  port=""
  # Below Linux's ephemeral ports (32768 up), which a script's own clients take by the thousand: a
  # port that no one listens on may still be bound by a client, and the server's bind would fail.
  for candidate in $(shuf -i 20000-32000 -n 50); do
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$candidate") 2>/dev/null; then port=$candidate; break; fi
  done
  [ -n "$port" ] || { echo "no free port for PostgreSQL" >&2; return 1; }
  mkdir "$folder"
  if [ "$(id -u)" = 0 ]; then chown postgres "$folder"; fi
  run_as_postgres "$bindir/initdb" -D "$folder/data" -U users --auth=trust --no-sync >"$folder/initdb.log" 2>&1 ||
    { cat "$folder/initdb.log" >&2; return 1; }
  run_as_postgres "$bindir/postgres" -D "$folder/data" -p "$port" -k "$folder" -c listen_addresses=127.0.0.1 \
    -c fsync=off >"$folder/postgres.log" 2>&1 &
  local _
  for _ in $(seq 100); do
    "$bindir/pg_isready" -q -h 127.0.0.1 -p "$port" && break
    sleep 0.1
  done
  "$bindir/pg_isready" -q -h 127.0.0.1 -p "$port" || { cat "$folder/postgres.log" >&2; return 1; }
  postgres_pid=$(head -1 "$folder/data/postmaster.pid")
}

stop_postgres() {
  if [ -n "$postgres_pid" ]; then
    kill -INT "$postgres_pid" 2>/dev/null || true
    while kill -0 "$postgres_pid" 2>/dev/null; do sleep 0.1; done
    postgres_pid=""
  fi
}
