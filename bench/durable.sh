#!/usr/bin/env bash
# bench/durable.sh: durable writes per second with -data, at 100, 1,000 and 10,000 users. For each
# size it writes a data file of that many seed users ("Seed User N", seedN@bench.test, as
# bench/seed makes them), starts the service on it, notes how long the start took (to the
# "listening" record), and sends PUTs only (the "put" workload of bench/workload.lua) from 1 and
# from 16 connections for DURATION seconds each. Every PUT is answered only once the whole file is
# rewritten and fsync'd. It prints requests/s and p99 for each. Beside the 16 writers, one more
# connection sends GETs of one user all the while: a read waits for a write in progress, which its
# p99 shows.
#
# Usage: bench/durable.sh     (about 1 minute a size; DURATION=10, SIZES="100 1000 10000")
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=${DURATION:-10} TOKEN=bench-write
read -r -a SIZES <<<"${SIZES:-100 1000 10000}"
source bench/common.sh # wrk, $work, pids and stop_all, wait_for_line

go build -o "$work/users" .

printf '%-7s %-8s %8s %8s %10s %14s\n' users writers 'start ms' 'req/s' 'p99 ms' 'read p99 ms'
for users in "${SIZES[@]}"; do
  for writers in 1 16; do
    dir=$(mktemp -d -p "$work")
    awk -v n="$users" 'BEGIN {
      printf "{\"next_id\": %d, \"users\": [\n", n + 1
      for (i = 1; i <= n; i++) printf "{\"id\": %d, \"name\": \"Seed User %d\", \"email\": \"seed%d@bench.test\"}%s\n", i, i, i, (i < n ? "," : "")
      print "]}" }' >"$dir/users.json"
    started=$(date +%s%N)
    USERS_TOKENS="$TOKEN:write" "$work/users" -addr 127.0.0.1:0 -data "$dir/users.json" 2>"$dir/log" &
    pids+=($!)
    url=http://$(wait_for_line "$dir/log" 'msg=listening' | grep -oE 'addr=[^ ]+' | cut -d= -f2)
    start_ms=$((($(date +%s%N) - started) / 1000000)) # to within wait_for_line's 0.1 s poll
    read_p99=-
    if [ "$writers" -gt 1 ]; then # a reader beside the writers, for the same time
      wrk -t1 -c1 -d"${DURATION}s" -s bench/workload.lua "$url" -- get "$TOKEN" "$users" "r$users" >"$dir/reads" &
      reader=$!
    fi
    wrk -t1 -c"$writers" -d"${DURATION}s" -s bench/workload.lua "$url" -- put "$TOKEN" "$users" "d$users" >"$dir/writes"
    if [ "$writers" -gt 1 ]; then
      wait "$reader"
      read_p99=$(grep '^RESULT' "$dir/reads" | grep -oE 'p99_us=[0-9]+' | awk -F= '{ printf "%.1f", $2 / 1000 }')
    fi
    grep '^RESULT' "$dir/writes" | awk -v u="$users" -v n="$writers" -v s="$start_ms" -v r="$read_p99" '{
        for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
        printf "%-7s %-8s %8s %8.0f %10.1f %14s\n", u, n, s, v["requests"] * 1e6 / v["duration_us"], v["p99_us"] / 1000, r }'
    stop_all
  done
done
