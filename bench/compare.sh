#!/usr/bin/env bash
# bench/compare.sh OTHER: the service of another checkout, or another built program, beside this
# one's, under the same four workloads as bench/load.sh (GET one user, the list, 90% GET and 10%
# PUT, POST), 1,000 seed users, wrk -c64. The rounds alternate between the two, so that a machine that slows down during
# the run slows both alike. It prints each run, then the medians and the ratio this/other.
#
# Usage: git worktree add ../before <commit>; bench/compare.sh ../before    (about 4 minutes)
#   OTHER may also be a program built elsewhere, such as examples/postgres/check.sh leaves in $OUT;
#   it gets this script's environment (DATABASE_URL, say).
#   DURATION=5 seconds a workload, ROUNDS=3, WORKLOADS="get list mix post", as load.sh takes them.
set -euo pipefail
other=$(realpath "$1")
cd "$(dirname "$0")/.."

DURATION=${DURATION:-5} ROUNDS=${ROUNDS:-3} USERS=1000 TOKEN=bench-write
read -r -a WORKLOADS <<<"${WORKLOADS:-get list mix post}"
source bench/common.sh # wrk, $work, pids and stop_all, wait_for_line

echo "building this checkout's service and $other's"
go build -o "$work/this" .
if [ -d "$other" ]; then (cd "$other" && go build -o "$work/other" .); else cp "$other" "$work/other"; fi
go build -o "$work/seed" ./bench/seed

for round in $(seq "$ROUNDS"); do
  for which in other this; do
    USERS_TOKENS="$TOKEN:write" "$work/$which" -addr 127.0.0.1:0 2>"$work/$which.log" &
    pids+=($!)
    url=http://$(wait_for_line "$work/$which.log" 'msg=listening' | grep -oE 'addr=[^ ]+' | cut -d= -f2)
    BENCH_TOKEN=$TOKEN "$work/seed" -url "$url" -users "$USERS"
    for workload in "${WORKLOADS[@]}"; do
      wrk -t2 -c64 -d1s -s bench/workload.lua "$url" -- "$workload" "$TOKEN" "$USERS" "warm$round$which" >/dev/null
      wrk -t2 -c64 -d"${DURATION}s" -s bench/workload.lua "$url" -- "$workload" "$TOKEN" "$USERS" "r$round$which" |
        grep '^RESULT' | awk -v w="$workload" -v t="$which" '{
          for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
          printf "%s %s %.0f\n", w, t, v["requests"] * 1e6 / v["duration_us"] }' | tee -a "$work/results"
    done
    stop_all
  done
done

median() { awk -v w="$1" -v t="$2" '$1 == w && $2 == t { print $3 }' "$work/results" | sort -g |
  awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo
echo "Medians of $ROUNDS rounds, req/s: this checkout, $other, and this/other"
for workload in "${WORKLOADS[@]}"; do
  this=$(median "$workload" this) before=$(median "$workload" other)
  awk -v w="$workload" -v a="$this" -v b="$before" 'BEGIN { printf "%-5s %8.0f %8.0f %6.2f\n", w, a, b, a / b }'
done
