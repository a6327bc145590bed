#!/usr/bin/env bash
# bench/load.sh: the service under load, side by side with the floor and a Gin peer. The floor
# (bench/floor) is net/http answering a constant body, the least any Go HTTP service can cost on
# this machine; the peer (bench/gin, its own module) is the same API written the plain way with Gin,
# run as Gin's quick start runs it (gin.Default: its Logger, to stdout, and Recovery).
#
# It builds the three, starts each on a free loopback port (the service with its default settings,
# its access log written to a file; the peer's access log, its stdout, also to a file), seeds the
# service and the peer alike with USERS users (ids 1..USERS), and runs wrk on four workloads against
# each: GET one user, GET the list of all users, POST a new user, and 90% GET one and 10% PUT. Every
# round starts the three afresh, so the POSTs of one round do not grow the next round's list. It
# prints each run as it goes, then, as medians over the rounds: requests per second, latency p50
# and p99, and the server's CPU time per request (user + system, from /proc/PID/stat) of each; then
# the ratios of the medians, each target marked ok or MISS:
#   service/gin req/s   >= 1.0 on every workload, and >= 5.0 on list
#   service/floor CPU   <= 1.25 on list
# and, as plain information without a target, service/floor req/s everywhere and service/floor
# CPU per request on the other workloads.
#
# Usage: bench/load.sh          about 4 minutes; the environment can shorten it:
#   DURATION=5  seconds each workload is measured      ROUNDS=3       rounds (medians are taken)
#   WARMUP=1    seconds of load before each measure    CONNECTIONS=64 wrk connections (THREADS=2)
#   USERS=1000  seed users                             WORKLOADS="get list mix post" (any of them)
# A quick look: DURATION=2 ROUNDS=1 bench/load.sh (about 40 s); WORKLOADS=list for one workload.
# The first run downloads Gin's module (pinned in bench/gin/go.sum) unless it is in the module cache.
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=${DURATION:-5} ROUNDS=${ROUNDS:-3} WARMUP=${WARMUP:-1}
CONNECTIONS=${CONNECTIONS:-64} THREADS=${THREADS:-2} USERS=${USERS:-1000}
TOKEN=bench-write
read -r -a WORKLOADS <<<"${WORKLOADS:-get list mix post}" # post last: it grows the collection

source bench/common.sh # wrk, $work, pids and stop_all, wait_for_line, cpu_ticks and clock_ticks

echo "building the service, the floor, the Gin peer and the seeder"
go build -o "$work/users" .
go build -o "$work/floor" ./bench/floor
(cd bench/gin && go build -o "$work/gin" .) # its own module: the service's go.mod requires nothing
go build -o "$work/seed" ./bench/seed

# measure NAME PID URL WORKLOAD ROUND: one wrk run, appended to results as one line.
measure() {
  local name=$1 pid=$2 url=$3 workload=$4 round=$5 before after out
  wrk -t"$THREADS" -c"$CONNECTIONS" -d"${WARMUP}s" -s bench/workload.lua "$url" -- \
    "$workload" "$TOKEN" "$USERS" "warm$round$name" >/dev/null
  before=$(cpu_ticks "$pid")
  out=$(wrk -t"$THREADS" -c"$CONNECTIONS" -d"${DURATION}s" -s bench/workload.lua "$url" -- \
    "$workload" "$TOKEN" "$USERS" "r$round$name" | grep '^RESULT')
  after=$(cpu_ticks "$pid")
  echo "$out" | awk -v name="$name" -v workload="$workload" -v ticks=$((after - before)) -v hz="$clock_ticks" '{
    for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
    if (v["bad_status"] > 0 || v["socket_errors"] > 0)
      printf "  warning: %s %s: %d bad statuses, %d socket errors\n", name, workload, v["bad_status"], v["socket_errors"] > "/dev/stderr"
    printf "%s %s %.0f %.0f %.0f %.2f\n", workload, name, v["requests"] * 1e6 / v["duration_us"],
      v["p50_us"], v["p99_us"], ticks * 1e6 / hz / v["requests"]
  }' | tee -a "$work/results"
}

echo "$(nproc) cores; wrk: $THREADS threads, $CONNECTIONS connections, ${DURATION}s per workload, $ROUNDS rounds"
echo "workload target req/s p50_us p99_us cpu_us_per_request"
for round in $(seq "$ROUNDS"); do
  echo "-- round $round"
  USERS_TOKENS="$TOKEN:write" "$work/users" -addr 127.0.0.1:0 2>"$work/access.log" &
  service_pid=$!; pids+=("$service_pid")
  "$work/floor" -addr 127.0.0.1:0 -users "$USERS" >"$work/floor.out" 2>&1 &
  floor_pid=$!; pids+=("$floor_pid")
  BENCH_TOKEN=$TOKEN "$work/gin" -addr 127.0.0.1:0 >"$work/gin.log" 2>"$work/gin.err" &
  gin_pid=$!; pids+=("$gin_pid")
  service_url=http://$(wait_for_line "$work/access.log" 'msg=listening' | grep -oE 'addr=[^ ]+' | cut -d= -f2)
  floor_url=http://$(wait_for_line "$work/floor.out" '^listening' | cut -d' ' -f2)
  gin_url=http://$(wait_for_line "$work/gin.log" '^listening' | cut -d' ' -f2)
  BENCH_TOKEN=$TOKEN "$work/seed" -url "$service_url" -users "$USERS"
  BENCH_TOKEN=$TOKEN "$work/seed" -url "$gin_url" -users "$USERS"
  for workload in "${WORKLOADS[@]}"; do
    measure service "$service_pid" "$service_url" "$workload" "$round"
    measure floor "$floor_pid" "$floor_url" "$workload" "$round"
    measure gin "$gin_pid" "$gin_url" "$workload" "$round"
  done
  echo "   (access logs: service $(wc -l <"$work/access.log") lines, gin $(grep -c '^\[GIN\] ' "$work/gin.log" || true) lines)"
  if [ -s "$work/gin.err" ]; then echo "  gin's stderr:" >&2; cat "$work/gin.err" >&2; fi
  stop_all
done

# median WORKLOAD TARGET COLUMN: the median over the rounds of one column of the results.
median() {
  awk -v w="$1" -v t="$2" -v c="$3" '$1 == w && $2 == t { print $c }' "$work/results" | sort -g |
    awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

echo
echo "Medians of $ROUNDS rounds ($(nproc) cores, wrk -c$CONNECTIONS, ${DURATION}s each, $USERS seed users)"
printf '%-9s | %-31s | %-31s | %s\n' workload \
  "service: req/s p50 p99 CPU/req" "floor: req/s p50 p99 CPU/req" "gin: req/s p50 p99 CPU/req"
for workload in "${WORKLOADS[@]}"; do
  line=$workload
  for target in service floor gin; do
    line="$line $(median "$workload" "$target" 3) $(median "$workload" "$target" 4)"
    line="$line $(median "$workload" "$target" 5) $(median "$workload" "$target" 6)"
  done
  echo "$line" >>"$work/medians"
  echo "$line" | awk '{
    printf "%-9s | %7.0f %5.0fus %6.0fus %5.1fus | %7.0f %5.0fus %6.0fus %5.1fus | %7.0f %5.0fus %6.0fus %5.1fus\n",
      $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13
  }'
done

echo
echo "Ratios of the medians (a target is ok or MISS; no target: information only)"
printf '%-9s | %-28s | %-19s | %s\n' workload \
  "service/gin req/s (target)" "service/floor req/s" "service/floor CPU/req (target)"
# Columns of medians: workload, then req/s p50 p99 CPU/req of the service ($2-$5), floor ($6-$9), gin ($10-$13).
awk '{
  rps_target = ($1 == "list") ? 5.0 : 1.0
  gin = $2 / $10; floor = $2 / $6; cpu = $5 / $9
  printf "%-9s | %5.2fx (>= %.1f) %-4s         | %5.2fx              | %5.2fx", $1, gin, rps_target,
    (gin >= rps_target ? "ok" : "MISS"), floor, cpu
  if ($1 == "list") printf " (<= 1.25) %s", (cpu <= 1.25 ? "ok" : "MISS")
  printf "\n"
}' "$work/medians"
