#!/usr/bin/env bash
# bench/postgres.sh: the list of examples/postgres at 10,000, 100,000 and 1,000,000 users, for
# docs/beyond-one-process.md ("Costs"). It builds the program with examples/postgres/build.sh,
# starts a PostgreSQL of its own (initdb in a temporary folder, a free port, fsync off, stopped by
# its pid), and for each count of users:
#   - makes a new database, whose table the program makes at its first start;
#   - loads the users with COPY from bench/pgseed, then VACUUM ANALYZE, as autovacuum would;
#   - starts the program again, so that its memory counts a start on that many users;
#   - sends each request once to warm up, then 5 times, and prints the median of curl's
#     time_total, in ms;
#   - times COUNT(*) of every user in psql, with no parallel workers, as the store asks, and with 2;
#   - sends the searches again without the trigram indexes, which it drops, for the plainer way;
#   - prints the program's memory: resident now (VmRSS), and at its peak since it started (VmHWM).
# At 300,000 users it also prints whether each target holds: a page of 20 by id, a page by name,
# an exact e-mail and a contains search (a rare family name and a common one) each within 60 ms,
# and the process under 200 MiB at its peak.
#
# Usage: bench/postgres.sh                  10,000, 100,000 and 1,000,000 (about 2 minutes)
#        USERS="300000" bench/postgres.sh   the targets (about 1 minute)
set -euo pipefail
cd "$(dirname "$0")/.."
read -r -a counts <<<"${USERS:-10000 100000 1000000}"

source examples/postgres/postgres.sh # find_postgres, start_postgres, stop_postgres
find_postgres || { echo "no PostgreSQL server on this machine (apt-get install postgresql)" >&2; exit 1; }

work=$(mktemp -d)
chmod 755 "$work"
program_pid=""
cleanup() {
  if [ -n "$program_pid" ]; then kill "$program_pid" 2>/dev/null || true; fi
  stop_postgres
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

echo "building examples/postgres and bench/pgseed"
examples/postgres/build.sh "$work/app" >/dev/null
go build -o "$work/pgseed" ./bench/pgseed

start_postgres "$work/pg" || { echo "PostgreSQL did not start" >&2; exit 1; }
psql() { "$bindir/psql" -h 127.0.0.1 -p "$port" -U users -X -q -A -t "$@"; }
echo "$("$bindir/postgres" --version), default settings but fsync=off, on $(nproc) CPUs; Go $(go env GOVERSION)"

token=bench-read
# start DATABASE: starts the program on DATABASE, its pid in program_pid and its URL in url.
start() {
  DATABASE_URL="postgres://users@127.0.0.1:$port/$1" USERS_TOKENS="$token:read" \
    "$work/app/users" -addr 127.0.0.1:0 2>"$work/program.log" &
  program_pid=$!
  url=""
  for _ in $(seq 600); do
    url=$(sed -n 's/.*msg=listening addr=\([^ ]*\).*/http:\/\/\1/p' "$work/program.log")
    [ -n "$url" ] && return
    sleep 0.1
  done
  cat "$work/program.log" >&2
  exit 1
}
stop() { kill "$program_pid" && wait "$program_pid" || true; program_pid=""; }
# median PATH: GETs PATH once, then 5 times, and prints the median time of the 5, in ms.
median() {
  curl -s -o /dev/null -H "Authorization: Bearer $token" "$url$1"
  for _ in 1 2 3 4 5; do
    curl -s -o /dev/null -w '%{time_total}\n' -H "Authorization: Bearer $token" "$url$1"
  done | sort -g | sed -n 3p | awk '{ printf "%.1f", $1 * 1000 }'
}
memory() { awk -v field="$1:" '$1 == field { printf "%.0f", $2 / 1024 }' "/proc/$program_pid/status"; } # MiB

for count in "${counts[@]}"; do
  echo
  echo "== $count users"
  database=users$count
  "$bindir/createdb" -h 127.0.0.1 -p "$port" -U users "$database"
  start "$database"
  stop
  loaded=$(date +%s)
  "$work/pgseed" -users "$count" | psql -d "$database" -c "COPY users (name, email, name_key, email_key) FROM STDIN (FORMAT csv)"
  psql -d "$database" -c "VACUUM ANALYZE users"
  echo "loaded in $(($(date +%s) - loaded)) s"
  start "$database"
  middle=$((count / 40)) # the page of 20 halfway down the list
  email=$(psql -d "$database" -c "SELECT email FROM users WHERE id = $((count / 2))")
  by_email=$(curl -s -o /dev/null -G --data-urlencode "email=$email" -w '%{url_effective}' "$url/api/users") # percent-encoded
  requests=( # label|path; 20 users a page
    "by id, page 1|/api/users?page=1&per_page=20"
    "by id, page 500|/api/users?page=500&per_page=20"
    "by id, page $middle (the middle)|/api/users?page=$middle&per_page=20"
    "by name, page 1|/api/users?sort=name&page=1&per_page=20"
    "by name, page 500|/api/users?sort=name&page=500&per_page=20"
    "by name, page $middle (the middle)|/api/users?sort=name&page=$middle&per_page=20"
    "email=, one match|${by_email#"$url"}"
    "q=kalomi, page 1|/api/users?q=kalomi&page=1&per_page=20"
    "q=hibe, page 1|/api/users?q=hibe&page=1&per_page=20"
    "q=lo, page 1|/api/users?q=lo&page=1&per_page=20"
    "GET one user|/api/users/$((count / 2))"
  )
  declare -A took=()
  for request in "${requests[@]}"; do
    took[${request%%|*}]=$(median "${request#*|}")
    printf '%-34s %8s ms\n' "${request%%|*}" "${took[${request%%|*}]}"
  done
  # COUNT(*) of every user, as the list counts them, in psql: without parallel workers, as the
  # store asks, and with two. One session: once to warm it up, then the median of 5 (\timing).
  for workers in 0 2; do
    counting=(-c "SET max_parallel_workers_per_gather = $workers" -c '\timing on')
    for _ in 1 2 3 4 5 6; do counting+=(-c "SELECT count(*) FROM users"); done
    printf '%-34s %8s ms\n' "COUNT(*) in psql, $workers workers" \
      "$(psql -d "$database" "${counting[@]}" | sed -n 's/^Time: \([0-9.]*\) ms$/\1/p' | tail -5 | sort -g | sed -n 3p)"
  done
  # The plainer way: the same searches without the trigram indexes, which read every row.
  psql -d "$database" -c "DROP INDEX users_name_key_trigrams, users_email_key_trigrams"
  for request in "q=kalomi, page 1|/api/users?q=kalomi&page=1&per_page=20" "q=hibe, page 1|/api/users?q=hibe&page=1&per_page=20"; do
    printf '%-34s %8s ms\n' "${request%%|*}, no trigram index" "$(median "${request#*|}")"
  done
  for text in kalomi hibe lo; do
    printf 'q=%s matches %s users\n' "$text" "$(curl -s -H "Authorization: Bearer $token" "$url/api/users?q=$text&per_page=1" | grep -oE '"total":[0-9]+' | cut -d: -f2)"
  done
  peak=$(memory VmHWM)
  echo "the process: $(memory VmRSS) MiB resident, $peak MiB at its peak"
  if [ "$count" = 300000 ]; then
    for request in "by id, page 1" "by name, page 1" "email=, one match" "q=kalomi, page 1" "q=hibe, page 1"; do
      awk -v r="$request" -v ms="${took[$request]}" 'BEGIN { printf "target %-20s within 60 ms: %s\n", r, (ms <= 60 ? "PASS" : "MISS") }'
    done
    awk -v m="$peak" 'BEGIN { printf "target the process under 200 MiB at its peak: %s\n", (m < 200 ? "PASS" : "MISS") }'
  fi
  unset took
  stop
done
