#!/usr/bin/env bash
# bench/load.sh: the service under load, side by side with the floor (bench/floor: net/http
# answering a constant body, the least any Go HTTP service can cost on this machine).
#
# It builds both, starts each on a free loopback port (the service with its default settings: the
# access log on, written to a file), seeds the service with USERS users, and runs wrk on four
# workloads against each: GET one user, GET the list of all users, POST a new user, and 90% GET one
# and 10% PUT. Every round starts both servers afresh, so the POSTs of one round do not grow the
# next round's list. It prints, as medians over the rounds: requests per second, latency p50 and
# p99, and the server's CPU time per request (user + system, from /proc/PID/stat), then the ratios
# of the service to the floor, next to the targets of issue #4.
#
# Usage: bench/load.sh          about 2.5 minutes; the environment can shorten it:
#   DURATION=5  seconds each workload is measured      ROUNDS=3       rounds (medians are taken)
#   WARMUP=1    seconds of load before each measure    CONNECTIONS=64 wrk connections (THREADS=2)
#   USERS=1000  seed users                             WORKLOADS="get list mix post" (any of them)
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=${DURATION:-5} ROUNDS=${ROUNDS:-3} WARMUP=${WARMUP:-1}
CONNECTIONS=${CONNECTIONS:-64} THREADS=${THREADS:-2} USERS=${USERS:-1000}
TOKEN=bench-write
read -r -a WORKLOADS <<<"${WORKLOADS:-get list mix post}" # post last: it grows the collection

if ! command -v wrk >/dev/null 2>&1; then
  echo "installing wrk (Debian package)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq wrk >/dev/null
fi

work=$(mktemp -d)
pids=()
stop_all() {
  for pid in "${pids[@]}"; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  pids=()
}
trap 'stop_all; rm -rf "$work"' EXIT
trap 'exit 130' INT TERM

echo "building the service, the floor and the seeder"
go build -o "$work/users" .
go build -o "$work/floor" ./bench/floor
go build -o "$work/seed" ./bench/seed
clock_ticks=$(getconf CLK_TCK)

# wait_for_line FILE PATTERN: print the first line of FILE matching PATTERN, waiting up to 10 s.
wait_for_line() {
  for _ in $(seq 100); do
    if grep -m1 -E "$2" "$1" 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "no line matching '$2' in $1:" >&2; cat "$1" >&2; return 1
}

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; } # utime + stime

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
  service_url=http://$(wait_for_line "$work/access.log" 'msg=listening' | grep -oE 'addr=[^ ]+' | cut -d= -f2)
  floor_url=http://$(wait_for_line "$work/floor.out" '^listening' | cut -d' ' -f2)
  BENCH_TOKEN=$TOKEN "$work/seed" -url "$service_url" -users "$USERS"
  for workload in "${WORKLOADS[@]}"; do
    measure service "$service_pid" "$service_url" "$workload" "$round"
    measure floor "$floor_pid" "$floor_url" "$workload" "$round"
  done
  echo "   (access log: $(wc -l <"$work/access.log") lines)"
  stop_all
done

# median WORKLOAD TARGET COLUMN: the median over the rounds of one column of the results.
median() {
  awk -v w="$1" -v t="$2" -v c="$3" '$1 == w && $2 == t { print $c }' "$work/results" | sort -g |
    awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

echo
echo "Medians of $ROUNDS rounds ($(nproc) cores, wrk -c$CONNECTIONS, ${DURATION}s each, $USERS seed users)"
printf '%-9s | %-30s | %-30s | %-22s | %s\n' workload \
  "service: req/s p50 p99 CPU/req" "floor: req/s p50 p99 CPU/req" "req/s ratio (target)" "CPU ratio (target)"
for workload in "${WORKLOADS[@]}"; do
  s_rps=$(median "$workload" service 3) s_p50=$(median "$workload" service 4)
  s_p99=$(median "$workload" service 5) s_cpu=$(median "$workload" service 6)
  f_rps=$(median "$workload" floor 3) f_p50=$(median "$workload" floor 4)
  f_p99=$(median "$workload" floor 5) f_cpu=$(median "$workload" floor 6)
  case $workload in
    get) rps_target=0.8 cpu_target=1.3 ;; list) rps_target=0.8 cpu_target=1.25 ;;
    post) rps_target=0.7 cpu_target=1.5 ;; mix) rps_target=0.7 cpu_target=1.4 ;;
  esac
  awk -v w="$workload" -v sr="$s_rps" -v s50="$s_p50" -v s99="$s_p99" -v sc="$s_cpu" \
    -v fr="$f_rps" -v f50="$f_p50" -v f99="$f_p99" -v fc="$f_cpu" -v rt="$rps_target" -v ct="$cpu_target" 'BEGIN {
    rr = sr / fr; cr = sc / fc
    printf "%-9s | %7.0f %5.0fus %6.0fus %5.1fus | %7.0f %5.0fus %6.0fus %5.1fus | %5.2fx (>= %s) %-4s | %5.2fx (<= %s) %s\n",
      w, sr, s50, s99, sc, fr, f50, f99, fc, rr, rt, (rr >= rt ? "ok" : "MISS"), cr, ct, (cr <= ct ? "ok" : "MISS")
  }'
done
