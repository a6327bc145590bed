#!/usr/bin/env bash
# bench/durable.sh [CHECKOUT]: durable writes per second. The service with -data, seeded with
# 1,000 users, takes PUTs only (the "put" workload of bench/workload.lua) from 1 and from 16
# connections, for DURATION seconds each; every PUT is answered only once its record is fsync'd.
# It prints requests/s and p99 for each. Given another checkout (a git worktree of an older
# commit, say), it measures that one's service the same way, the rounds alternating between them.
#
# Usage: bench/durable.sh [../before]     (about 1 minute per checkout; DURATION=10 ROUNDS=1 by default)
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=${DURATION:-10} ROUNDS=${ROUNDS:-1} USERS=1000 TOKEN=bench-write
source bench/common.sh # wrk, $work, pids and stop_all, wait_for_line

checkouts=(this)
go build -o "$work/this" .
if [ $# -gt 0 ]; then
  (cd "$1" && go build -o "$work/other" .)
  checkouts=(other this)
fi
go build -o "$work/seed" ./bench/seed

printf '%-6s %-8s %8s %10s\n' which writers 'req/s' 'p99 ms'
for round in $(seq "$ROUNDS"); do
  for which in "${checkouts[@]}"; do
    for writers in 1 16; do
      dir=$(mktemp -d -p "$work")
      USERS_TOKENS="$TOKEN:write" "$work/$which" -addr 127.0.0.1:0 -data "$dir/users.jsonl" 2>"$dir/log" &
      pids+=($!)
      url=http://$(wait_for_line "$dir/log" 'msg=listening' | grep -oE 'addr=[^ ]+' | cut -d= -f2)
      BENCH_TOKEN=$TOKEN "$work/seed" -url "$url" -users "$USERS"
      wrk -t1 -c"$writers" -d"${DURATION}s" -s bench/workload.lua "$url" -- put "$TOKEN" "$USERS" "d$round" |
        grep '^RESULT' | awk -v w="$which" -v n="$writers" '{
          for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
          printf "%-6s %-8s %8.0f %10.1f\n", w, n, v["requests"] * 1e6 / v["duration_us"], v["p99_us"] / 1000 }'
      stop_all
    done
  done
done
