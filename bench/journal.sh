#!/usr/bin/env bash
# bench/journal.sh: the -data journal under sustained load. While the service runs, it compacts its
# journal once the file passes 4 × the live data + the slack (-compact-slack, 1 MiB by default);
# "live data" is the size the compacted file would have (a next_id line, then one put line per live
# user). This script measures what that bound gives under load, in two parts.
#
# 1. With and without compaction. PUTs only (the "put" workload of bench/workload.lua: a whole
#    replacement of one of the USERS seed users, keeping its own e-mail, so none conflicts) for
#    DURATION seconds against (a) the service with the default slack, so that it compacts, and
#    (b) the service with -compact-slack 1099511627776 (1 TiB), so that it never does. For each:
#    the journal's largest size (stat -c %s every 100 ms while wrk runs), the compactions (the
#    "journal: compacted" lines of its log), wrk's requests/s and latency p50 and p99, the live
#    data once the server has stopped (SIGTERM), and largest/live.
# 2. The "done when" check. 90% GET, 10% PUT (the "mix" workload) for DURATION seconds on USERS
#    users with the default settings, sampling the journal's size and the server's open file
#    descriptors (ls /proc/PID/fd | wc -l) every 100 ms. It reports the largest journal, the live
#    data and whether largest < 8 × live + 2 MiB (ok or MISS); the smallest and the largest fd count
#    while wrk's connections are open (samples from 1 s into the load on, so that wrk has opened
#    them all; both should be equal but for the one or two a compaction opens for a moment), and
#    the count when the server is idle before and after the load; then it stops the server
#    (SIGTERM), starts the binary again on that journal with the default settings, and reports the
#    time until its listening line appears (polled every 5 ms) and the users that line counts
#    (must be USERS).
#
# The live data is computed from the stopped server's journal the way the service replays it: the
# last put line of each user not deleted since, plus the next_id line compaction would write first
# (its id one past the largest id ever written, or the file's own next_id if larger). As a check, a
# copy of the journal is then started with -compact-slack 0, which compacts it at start if the file
# is more than 4 × the live data; when it does, its bytes_after must equal that figure.
#
# The commands (wrk: THREADS threads, CONNECTIONS connections; TOKEN bench-write, as bench/load.sh):
#   USERS_TOKENS="bench-write:write" users -addr 127.0.0.1:0 -data DIR/put-default/users.jsonl
#   USERS_TOKENS="bench-write:write" users -addr 127.0.0.1:0 -data DIR/put-none/users.jsonl -compact-slack 1099511627776
#   USERS_TOKENS="bench-write:write" users -addr 127.0.0.1:0 -data DIR/mix/users.jsonl
#   BENCH_TOKEN=bench-write seed -url URL -users USERS          (each server gets its seed users first)
#   wrk -t2 -c64 -d60s -s bench/workload.lua URL -- put bench-write 1000 TAG     (part 1, both servers)
#   wrk -t2 -c64 -d60s -s bench/workload.lua URL -- mix bench-write 1000 TAG     (part 2)
#   users -addr 127.0.0.1:0 -data COPY -compact-slack 0                          (the check of the live data)
#   users -addr 127.0.0.1:0 -data DIR/mix/users.jsonl                            (the restart of part 2)
# DIR is a temporary folder under /tmp (mktemp -d), removed at the end.
#
# Usage: bench/journal.sh       a little over 3 minutes (three loads of 60 s); the environment can shorten it:
#   DURATION=60  seconds of each load     USERS=1000  seed users     CONNECTIONS=64  wrk connections (THREADS=2)
# A quick look: DURATION=5 bench/journal.sh (about 25 s).
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=${DURATION:-60} USERS=${USERS:-1000} CONNECTIONS=${CONNECTIONS:-64} THREADS=${THREADS:-2}
TOKEN=bench-write
NO_COMPACTION=1099511627776 # 1 TiB: a bound the load never reaches
export LC_ALL=C             # awk's length() counts bytes

source bench/common.sh # wrk, $work, pids and stop_all, wait_for_line

echo "building the service and the seeder"
go build -o "$work/users" .
go build -o "$work/seed" ./bench/seed


# start LOG ARGS...: start the service with ARGS, its log (access log included) to LOG; sets pid
# and url once it listens.
start() {
  local log=$1; shift
  USERS_TOKENS="$TOKEN:write" "$work/users" -addr 127.0.0.1:0 "$@" 2>"$log" &
  pid=$!; pids+=("$pid")
  url=http://$(wait_for_line "$log" 'msg=listening' | grep -oE 'addr=[^ ]+' | cut -d= -f2)
}

# stop PID: SIGTERM, and wait until the server has exited (it finishes the requests in flight).
stop() {
  kill -TERM "$1"
  wait "$1" || { echo "the server $1 exited with status $?" >&2; return 1; }
  local kept=()
  for p in "${pids[@]}"; do [ "$p" = "$1" ] || kept+=("$p"); done
  pids=("${kept[@]+"${kept[@]}"}")
}

fds() { ls "/proc/$1/fd" | wc -l; }

# sample PID FILE: every 100 ms, one line "ms_since_start journal_bytes open_fds", until killed.
sample() {
  local t0 now size count
  t0=$(date +%s%N)
  while :; do
    size=$(stat -c %s "$2" 2>/dev/null) || size=-1
    count=$(fds "$1" 2>/dev/null) || count=-1
    now=$(date +%s%N)
    echo "$(((now - t0) / 1000000)) $size $count"
    sleep 0.1
  done
}

# live_size FILE: the size FILE would have once compacted (see the header).
live_size() {
  awk '
    { match($0, /"id":[0-9]+/); id = substr($0, RSTART + 5, RLENGTH - 5) + 0 }
    /^\{"op":"next_id",/ { if (id > next_id) next_id = id; next }
    /^\{"op":"put",/     { line[id] = length($0) + 1; if (id + 1 > next_id) next_id = id + 1; next }
    /^\{"op":"delete",/  { delete line[id]; next }
    { print "not a journal line: " $0 > "/dev/stderr"; exit 1 }
    END {
      if (next_id == 0) next_id = 1
      total = length("{\"op\":\"next_id\",\"id\":" next_id "}") + 1
      for (id in line) total += line[id]
      print total
    }' "$1"
}

# check_live NAME FILE LIVE: start a copy of FILE with -compact-slack 0 and compare its compaction.
check_live() {
  local name=$1 file=$2 live=$3 copy=$work/$1/check.jsonl after
  cp "$file" "$copy"
  start "$work/$name/check.log" -data "$copy" -compact-slack 0
  stop "$pid"
  after=$(grep -m1 'msg="journal: compacted"' "$work/$name/check.log" | grep -oE 'bytes_after=[0-9]+' | cut -d= -f2) || true
  if [ -z "$after" ]; then
    echo "   live data check: no compaction at start (the file is at most 4 × the live data); computed $live"
  elif [ "$after" = "$live" ]; then
    echo "   live data check: computed $live, the service compacted the copy to $after: equal"
  else
    echo "   live data check: computed $live, but the service compacted the copy to $after: DIFFERENT" >&2
    mismatches=$((mismatches + 1))
  fi
}

# wrk_result OUT: "req/s p50_us p99_us errors" from wrk's RESULT line.
wrk_result() {
  grep '^RESULT' "$1" | awk '{
    for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
    printf "%.0f %d %d %d\n", v["requests"] * 1e6 / v["duration_us"], v["p50_us"], v["p99_us"],
      v["bad_status"] + v["socket_errors"]
  }'
}

# run NAME WORKLOAD ARGS...: a fresh journal, USERS seed users, DURATION seconds of WORKLOAD with
# the journal sampled, then SIGTERM. Leaves pid (stopped), its files in $work/NAME, and one line
# "name largest live compactions req/s p50 p99 errors log_problems" in $work/results.
run() {
  local name=$1 workload=$2; shift 2
  local dir=$work/$name sampler largest live compactions result problems
  mkdir -p "$dir"
  start "$dir/server.log" -data "$dir/users.jsonl" "$@"
  BENCH_TOKEN=$TOKEN "$work/seed" -url "$url" -users "$USERS"
  sleep 0.3
  idle_before=$(fds "$pid")
  sample "$pid" "$dir/users.jsonl" >"$dir/samples" &
  sampler=$!; pids+=("$sampler")
  wrk -t"$THREADS" -c"$CONNECTIONS" -d"${DURATION}s" -s bench/workload.lua "$url" -- \
    "$workload" "$TOKEN" "$USERS" "$name" >"$dir/wrk.out"
  kill "$sampler"; wait "$sampler" 2>/dev/null || true
  sleep 0.5
  idle_after=$(fds "$pid")
  stop "$pid"
  largest=$(awk 'BEGIN { m = 0 } $2 > m { m = $2 } END { print m }' "$dir/samples")
  live=$(live_size "$dir/users.jsonl")
  compactions=$(grep -c 'msg="journal: compacted"' "$dir/server.log") || true
  problems=$(grep -cE 'level=(WARN|ERROR)' "$dir/server.log") || true
  result=$(wrk_result "$dir/wrk.out")
  echo "$name $largest $live $compactions $result $problems" | tee -a "$work/results" | awk '{
    printf "   largest journal %d B, live data %d B (%.1fx), %d compactions; %d req/s, p50 %d us, p99 %d us; %d wrk errors, %d WARN/ERROR log lines\n",
      $2, $3, $2 / $3, $4, $5, $6, $7, $8, $9 }'
  if [ "$compactions" -gt 0 ]; then
    echo "   largest size a compaction saw (bytes_before): $(grep -oE 'bytes_before=[0-9]+' "$dir/server.log" |
      cut -d= -f2 | sort -n | tail -1) B; bound 4 × live + slack"
  fi
  check_live "$name" "$dir/users.jsonl" "$live"
}

mismatches=0
echo "$(nproc) cores; wrk: $THREADS threads, $CONNECTIONS connections, ${DURATION}s per load; $USERS seed users"
echo "-- 1a. PUTs only, default slack (compactions happen)"
run put-default put
echo "-- 1b. PUTs only, -compact-slack $NO_COMPACTION (no compaction)"
run put-none put -compact-slack "$NO_COMPACTION"
echo "-- 2. 90% GET / 10% PUT, default settings"
run mix mix
mix_dir=$work/mix
read -r fd_min fd_max < <(awk '$1 >= 1000 && $3 >= 0 { if (n++ == 0 || $3 < lo) lo = $3; if ($3 > hi) hi = $3 }
  END { print (n ? lo : -1), (n ? hi : -1) }' "$mix_dir/samples")
echo "   open fds: $fd_min to $fd_max under load (from 1 s in), $idle_before idle before, $idle_after idle after"

# The restart on the mix journal, as the load left it, with the default settings.
restart_bytes=$(stat -c %s "$mix_dir/users.jsonl")
USERS_TOKENS="$TOKEN:write" "$work/users" -addr 127.0.0.1:0 -data "$mix_dir/users.jsonl" 2>"$mix_dir/restart.log" &
t0=$(date +%s%N); pid=$!; pids+=("$pid")
for _ in $(seq 2000); do
  if grep -q 'msg=listening' "$mix_dir/restart.log"; then break; fi
  sleep 0.005
done
restart_ms=$((($(date +%s%N) - t0) / 1000000))
listening=$(wait_for_line "$mix_dir/restart.log" 'msg=listening')
restart_users=$(echo "$listening" | grep -oE ' users=[0-9]+' | cut -d= -f2)
stop "$pid"
echo "   restart on the $restart_bytes B journal: listening after $restart_ms ms, users=$restart_users"
echo "   $listening"

echo
echo "Summary ($(nproc) cores, wrk -t$THREADS -c$CONNECTIONS, ${DURATION}s each, $USERS users; sizes in bytes)"
printf '%-26s | %8s %7s %7s | %10s %8s %8s | %11s | %s\n' run req/s p50 p99 largest live largest/live compactions "errors (wrk, log)"
awk '{
  label = ($1 == "put-default") ? "PUT, default slack" : ($1 == "put-none") ? "PUT, 1 TiB slack (none)" : "GET 90% / PUT 10%, default"
  printf "%-26s | %8d %5.1fms %5.1fms | %10d %8d %11.1fx | %11d | %d, %d\n", label, $5, $6 / 1000, $7 / 1000, $2, $3, $2 / $3, $4, $8, $9
}' "$work/results"

echo
echo "Done when (GET 90% / PUT 10%, default settings):"
read -r largest live < <(awk '$1 == "mix" { print $2, $3 }' "$work/results")
bound=$((8 * live + 2 * 1048576))
printf '  largest journal %d < 8 × live %d + 2 MiB = %d: %s\n' "$largest" "$live" "$bound" \
  "$([ "$largest" -lt "$bound" ] && echo ok || echo MISS)"
printf '  open fds under load: smallest %d, largest %d: %s (idle: %d before, %d after)\n' "$fd_min" "$fd_max" \
  "$([ $((fd_max - fd_min)) -le 2 ] && echo flat || echo 'NOT FLAT')" "$idle_before" "$idle_after"
printf '  restart on that journal: listening after %d ms, users=%s: %s\n' "$restart_ms" "$restart_users" \
  "$([ "$restart_users" = "$USERS" ] && echo ok || echo MISS)"
if [ "$mismatches" -gt 0 ]; then
  echo "  the computed live data and the service's compaction disagreed $mismatches time(s): see above" >&2
fi
