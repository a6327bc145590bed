#!/usr/bin/env bash
# examples/postgres/check.sh (a step of ./test.sh): the service over PostgreSQL, checked as a
# copier would run it.
#
# It builds the program with build.sh (into $OUT too, when OUT names a folder), starts a PostgreSQL
# of its own (initdb in a temporary folder, a free port, stopped by its pid), and then:
#   - starts two processes at the same moment on a new database, several times, with -sample-data
#     and without: both start, and the sample users are added once;
#   - starts two processes on one database, runs the conformance kit against each, and races them:
#     the same e-mail, the same If-Match, ids from both, and two PUTs that swap two e-mails;
#   - restarts both and finds the same users;
#   - runs the tests of this folder with -race: the store's against the database, and the list's,
#     which compares every sort, filter and page with the repository's own service in memory.
#
# Exit status: 0 when it passed, 1 when it failed, 77 when this machine has no PostgreSQL server
# (./test.sh reports that as a skip; .ci/run installs it).
set -euo pipefail
cd "$(dirname "$0")"
root=$(cd ../.. && pwd)

source ./postgres.sh # find_postgres, start_postgres, stop_postgres
if ! find_postgres; then
  echo "PostgreSQL check skipped: no PostgreSQL server on this machine (apt-get install postgresql)"
  exit 77
fi

work=$(mktemp -d)
chmod 755 "$work"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  stop_postgres
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "PostgreSQL check FAILED: $*" >&2; exit 1; }
started=$(date +%s)

echo "== build the program as README.md tells a copier to (build.sh), and the repository's own"
./build.sh "$work/app"
users=$work/app/users
if [ -n "${OUT:-}" ]; then
  mkdir -p "$OUT" && cp "$users" "$OUT/users"
  echo "the built program is in $OUT/users"
fi
(cd "$root" && go build -o "$work/memory" .)

echo "== a PostgreSQL of the check's own, $("$bindir/postgres" --version)"
start_postgres "$work/pg" || fail "PostgreSQL did not start"
server=postgres://users@127.0.0.1:$port
createdb() { "$bindir/createdb" -h 127.0.0.1 -p "$port" -U users "$@"; }
psql() { "$bindir/psql" -h 127.0.0.1 -p "$port" -U users -X -q -A -t "$@"; }

tokens="check-write:write,check-read:read"
# program NAME DATABASE [FLAG...]: runs the program on DATABASE, in place of the shell that calls
# it, its log in $work/NAME.log.
program() {
  local name=$1 database=$2
  shift 2
  DATABASE_URL=$server/$database USERS_TOKENS=$tokens exec "$users" -addr 127.0.0.1:0 "$@" 2>"$work/$name.log"
}
# launch NAME DATABASE [FLAG...]: starts the program in the background, its pid in NAME_pid.
launch() {
  program "$@" &
  pids+=($!)
  eval "$1_pid=$!"
}
# listening NAME: waits for NAME's start-up log and sets NAME_url to the address it bound; fails if
# the process ends first.
listening() {
  local addr="" pid
  pid=$(eval echo "\$$1_pid")
  for _ in $(seq 100); do
    addr=$(sed -n 's/.*msg=listening addr=\([^ ]*\).*/\1/p' "$work/$1.log" 2>/dev/null || true) # no log yet: not started
    [ -n "$addr" ] || ! kill -0 "$pid" 2>/dev/null && break
    sleep 0.1
  done
  [ -n "$addr" ] || { cat "$work/$1.log"; fail "$1 did not start"; }
  eval "$1_url=http://$addr"
}
start() { launch "$@" && listening "$1"; }
stop() { kill "$(eval echo "\$$1_pid")"; wait "$(eval echo "\$$1_pid")" || true; }
# together DATABASE [FLAG...]: starts processes one and two at the same moment on DATABASE: both
# wait at a gate, a pipe held open on file descriptor 3, and one write lets both through.
together() {
  rm -f "$work/gate" && mkfifo "$work/gate"
  exec 3<>"$work/gate"
  for name in one two; do
    { read -r _ <&3 && program "$name" "$@" 3<&-; } &
    pids+=($!)
    eval "${name}_pid=$!"
  done
  sleep 0.2 # time for both to reach the gate; one that comes later finds its line waiting
  printf 'go\ngo\n' >&3
  exec 3>&-
  listening one
  listening two
}

echo "== two processes started at the same moment on a new database, 10 times: both start"
for round in $(seq 10); do
  createdb "new$round"
  together "new$round"
  stop one
  stop two
done
echo "both started, 10 times out of 10"
echo "== two started at the same moment with -sample-data, 10 times: both start, the samples go in once"
for round in $(seq 10); do
  createdb "samples$round"
  start one "samples$round" # makes the table, which never had a user
  stop one
  together "samples$round" -sample-data
  count=$(psql -d "samples$round" -c 'SELECT count(*) FROM users')
  [ "$count" = 12 ] || fail "two processes started with -sample-data at once: $count users, want the 12 samples"
  stop one
  stop two
done
echo "both started, and the table held the 12 samples once, 10 times out of 10"

echo "== two processes on one database"
createdb users
start one users -cors-origin http://localhost:3000
start two users -cors-origin http://localhost:3000
echo "one at $one_url, two at $two_url, both on $server/users"

echo "== the conformance kit against each"
for url in "$one_url" "$two_url"; do
  (cd "$root" && USERS_WRITE_TOKEN=check-write USERS_READ_TOKEN=check-read go run ./conformance -url "$url") | tail -1
done

echo "== races across the two: the same e-mail, the same If-Match, ids from both, an e-mail swap"
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

# The swap: Ann asks for Bob's e-mail on one process while Bob asks for Ann's on the other. One at
# a time, each is refused, 409: the other still has the e-mail. curl --parallel sends both at once,
# each on a new connection (--no-progress-meter: curl 7.88 shows its meter for --parallel despite
# -s). Two transactions overlap so as to deadlock about once in 50 rounds.
swap_id() { curl -s -H 'Authorization: Bearer check-write' -H 'Content-Type: application/json' -d "{\"name\": \"$1\", \"email\": \"$2\"}" "$one_url/api/users" |
  grep -oE '^\{"id":[0-9]+' | cut -d: -f2; }
ann=$(swap_id "Swap Ann" swap.ann@example.com)
bob=$(swap_id "Swap Bob" swap.bob@example.com)
swap_put=(-o /dev/null -w '%{http_code}\n' -H 'Authorization: Bearer check-write' -H 'Content-Type: application/json' -X PUT)
for round in $(seq 200); do
  statuses=$(curl --no-progress-meter --parallel --parallel-immediate \
    "${swap_put[@]}" -d '{"name": "Swap Ann", "email": "swap.bob@example.com"}' "$one_url/api/users/$ann" --next \
    "${swap_put[@]}" -d '{"name": "Swap Bob", "email": "swap.ann@example.com"}' "$two_url/api/users/$bob" | sort | tr '\n' ' ')
  [ "$statuses" = "409 409 " ] || fail "round $round of the e-mail swap across the two processes: $statuses, want 409 409 as one at a time"
done
echo "two PUTs that swap two users' e-mails, one on each process at once, 200 times: 409 and 409 each time"

echo "== both restarted: the data is still there, and ids go on increasing"
before=$(curl -s -H 'Authorization: Bearer check-read' "$one_url/api/users")
stop one
stop two
start one users
start two users
for url in "$one_url" "$two_url"; do
  [ "$(curl -s -H 'Authorization: Bearer check-read' "$url/api/users")" = "$before" ] || fail "the users changed across a restart"
done
next=$(curl -s -H 'Authorization: Bearer check-write' -H 'Content-Type: application/json' -d '{"name": "After", "email": "after@example.com"}' "$two_url/api/users" |
  grep -oE '^\{"id":[0-9]+' | cut -d: -f2)
[ "$next" -gt "$largest" ] || fail "the first id after the restart, $next, is not above $largest"
echo "the same users after a restart; the next id, $next, is above every id given"
stop one
stop two

echo "== the tests of this folder, with -race: the store's, and the list's against the service in memory"
# The list's test puts the same users into the repository's own service, in memory, and into this
# one, on a database whose own collation, ICU's English, orders "é" before "f", where Go's byte
# order puts it after "z".
createdb --locale-provider=icu --icu-locale=en --template=template0 list
start one list
USERS_TOKENS=$tokens "$work/memory" -addr 127.0.0.1:0 2>"$work/memory.log" &
pids+=($!)
memory_pid=$!
listening memory
cp ./*_test.go "$work/app/"
(cd "$work/app" && DATABASE_URL=$server/users MEMORY_URL=$memory_url POSTGRES_URL=$one_url WRITE_TOKEN=check-write go test -race -count=1 .)
stop one
stop memory

echo "PostgreSQL check passed in $(($(date +%s) - started)) s"
