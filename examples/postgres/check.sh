#!/usr/bin/env bash
# examples/postgres/check.sh (a step of ./test.sh): the service over PostgreSQL, checked as a
# copier would run it.
#
# It builds the program with build.sh, as README.md here tells a copier to, and leaves it in $OUT
# when OUT names a folder. Then it starts a PostgreSQL of its own (initdb in a temporary folder, a
# free port, stopped by its pid), starts two processes of the program on one database, runs the conformance kit against each, races them
# (the same e-mail, the same If-Match, ids from both), restarts both and finds the data, and runs
# the tests of this folder's store (store_test.go) with -race against the database.
#
# Exit status: 0 when it passed, 1 when it failed, 77 when this machine has no PostgreSQL server
# (./test.sh reports that as a skip; .ci/run installs it).
set -euo pipefail
cd "$(dirname "$0")"
root=$(cd ../.. && pwd)

bindir=""
for dir in "$(pg_config --bindir 2>/dev/null || true)" /usr/lib/postgresql/*/bin; do
  if [ -x "$dir/initdb" ] && [ -x "$dir/postgres" ]; then bindir=$dir; fi
done
if [ -z "$bindir" ]; then
  echo "PostgreSQL check skipped: no PostgreSQL server on this machine (apt-get install postgresql)"
  exit 77
fi

work=$(mktemp -d)
chmod 755 "$work"
pids=()
postgres_pid=""
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  if [ -n "$postgres_pid" ]; then # a fast stop, then wait for the server to be gone
    kill -INT "$postgres_pid" 2>/dev/null || true
    while kill -0 "$postgres_pid" 2>/dev/null; do sleep 0.1; done
  fi
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "PostgreSQL check FAILED: $*" >&2; exit 1; }
started=$(date +%s)

echo "== build the program as README.md tells a copier to (build.sh)"
./build.sh "$work/app"
cp "$work/app/users" "$work/users"
if [ -n "${OUT:-}" ]; then
  mkdir -p "$OUT" && cp "$work/users" "$OUT/users"
  echo "the built program is in $OUT/users"
fi

echo "== a PostgreSQL of the check's own, $("$bindir/postgres" --version)"
run_as_postgres() { # initdb and postgres refuse to run as root
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
port=""
for candidate in $(shuf -i 20000-60000 -n 50); do
  if ! (exec 3<>"/dev/tcp/127.0.0.1/$candidate") 2>/dev/null; then port=$candidate; break; fi
done
[ -n "$port" ] || fail "no free port"
mkdir "$work/pg"
[ "$(id -u)" = 0 ] && chown postgres "$work/pg"
run_as_postgres "$bindir/initdb" -D "$work/pg/data" -U users --auth=trust --no-sync >"$work/initdb.log" 2>&1 ||
  { cat "$work/initdb.log"; fail "initdb"; }
run_as_postgres "$bindir/postgres" -D "$work/pg/data" -p "$port" -k "$work/pg" -c listen_addresses=127.0.0.1 \
  -c fsync=off >"$work/postgres.log" 2>&1 &
for _ in $(seq 100); do
  "$bindir/pg_isready" -q -h 127.0.0.1 -p "$port" && break
  sleep 0.1
done
"$bindir/pg_isready" -q -h 127.0.0.1 -p "$port" || { cat "$work/postgres.log"; fail "PostgreSQL did not start"; }
postgres_pid=$(head -1 "$work/pg/data/postmaster.pid") # the server's own pid: runuser's would not pass a signal on
"$bindir/createdb" -h 127.0.0.1 -p "$port" -U users users
export DATABASE_URL="postgres://users@127.0.0.1:$port/users"

tokens="check-write:write,check-read:read"
start() { # start NAME: a process of the program on the database; its URL in $NAME_url
  USERS_TOKENS=$tokens "$work/users" -addr 127.0.0.1:0 -cors-origin http://localhost:3000 2>"$work/$1.log" &
  pids+=($!)
  eval "$1_pid=$!"
  local addr=""
  for _ in $(seq 100); do
    addr=$(sed -n 's/.*msg=listening addr=\([^ ]*\).*/\1/p' "$work/$1.log")
    [ -n "$addr" ] && break
    sleep 0.1
  done
  [ -n "$addr" ] || { cat "$work/$1.log"; fail "$1 did not start"; }
  eval "$1_url=http://$addr"
}
stop() { kill "$(eval echo "\$$1_pid")"; wait "$(eval echo "\$$1_pid")" || true; }

echo "== two processes on one database"
start one
start two
echo "one at $one_url, two at $two_url, both on $DATABASE_URL"

echo "== the conformance kit against each"
for url in "$one_url" "$two_url"; do
  (cd "$root" && USERS_WRITE_TOKEN=check-write USERS_READ_TOKEN=check-read go run ./conformance -url "$url") | tail -1
done

echo "== a race across the two: the same e-mail, the same If-Match, ids from both"
post() { curl -s -o /dev/null -w '%{http_code}\n' -H 'Authorization: Bearer check-write' -H 'Content-Type: application/json' -d "$2" "$1/api/users"; }
for i in $(seq 10); do
  body="{\"name\": \"Race $i\", \"email\": \"race$i@example.com\"}"
  statuses=$( { post "$one_url" "$body" & post "$two_url" "$body" & wait; } | sort | tr '\n' ' ')
  [ "$statuses" = "201 409 " ] || fail "the same e-mail from both processes: $statuses, want one 201 and one 409"
done
echo "the same e-mail from both, 10 times: one 201 and one 409 each time"
created=$(curl -s -D - -H 'Authorization: Bearer check-write' -H 'Content-Type: application/json' -d '{"name": "Tag", "email": "tag@example.com"}' "$one_url/api/users")
location=$(echo "$created" | tr -d '\r' | sed -n 's/^Location: //p')
etag=$(echo "$created" | tr -d '\r' | sed -n 's/^Etag: //p')
put() { curl -s -o /dev/null -w '%{http_code}\n' -X PUT -H 'Authorization: Bearer check-write' -H 'Content-Type: application/json' \
  -H "If-Match: $etag" -d "{\"name\": \"$2\", \"email\": \"tag@example.com\"}" "$1$location"; }
statuses=$( { put "$one_url" "One" & put "$two_url" "Two" & wait; } | sort | tr '\n' ' ')
[ "$statuses" = "200 412 " ] || fail "the same If-Match from both processes: $statuses, want one 200 and one 412"
echo "the same If-Match from both: one 200 and one 412"
ids() { for i in $(seq 20); do
  curl -s -H 'Authorization: Bearer check-write' -H 'Content-Type: application/json' -d "{\"name\": \"Id\", \"email\": \"$2$i@example.com\"}" "$1/api/users" |
    grep -oE '^\{"id":[0-9]+' | cut -d: -f2
done; }
ids "$one_url" one >"$work/ids-one" &
from_one=$!
ids "$two_url" two >"$work/ids-two" &
wait "$from_one" "$!"
[ "$(wc -l <"$work/ids-one")" = 20 ] && [ "$(wc -l <"$work/ids-two")" = 20 ] || fail "not every create answered with an id"
[ "$(cat "$work/ids-one" "$work/ids-two" | sort -n | uniq | wc -l)" = 40 ] || fail "two processes gave one id twice"
sort -n -c "$work/ids-one" && sort -n -c "$work/ids-two" || fail "a process's ids do not increase"
largest=$(cat "$work/ids-one" "$work/ids-two" | sort -n | tail -1)
echo "40 creates from both at once: 40 ids, distinct, increasing in each process"

echo "== both restarted: the data is still there, and ids go on increasing"
before=$(curl -s -H 'Authorization: Bearer check-read' "$one_url/api/users")
stop one
stop two
start one
start two
for url in "$one_url" "$two_url"; do
  [ "$(curl -s -H 'Authorization: Bearer check-read' "$url/api/users")" = "$before" ] || fail "the users changed across a restart"
done
next=$(curl -s -H 'Authorization: Bearer check-write' -H 'Content-Type: application/json' -d '{"name": "After", "email": "after@example.com"}' "$two_url/api/users" |
  grep -oE '^\{"id":[0-9]+' | cut -d: -f2)
[ "$next" -gt "$largest" ] || fail "the first id after the restart, $next, is not above $largest"
echo "the same users after a restart; the next id, $next, is above every id given"
stop one
stop two

echo "== the store's own tests, with -race, against the database"
cp store_test.go "$work/app/"
(cd "$work/app" && go test -race -count=1 .)

echo "PostgreSQL check passed in $(($(date +%s) - started)) s"
