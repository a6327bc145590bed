# What bench/load.sh, bench/compare.sh, bench/durable.sh and bench/tls.sh share: wrk, a folder for the run, the
# servers they start (each added to pids, all stopped at the end), waiting for a server's log line,
# and a process's CPU time. Source it.

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

clock_ticks=$(getconf CLK_TCK)
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; } # utime + stime of process $1, in clock ticks

# wait_for_line FILE PATTERN: print the first line of FILE matching PATTERN, waiting up to 10 s.
wait_for_line() {
  for _ in $(seq 100); do
    if grep -m1 -E "$2" "$1" 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "no line matching '$2' in $1:" >&2; cat "$1" >&2; return 1
}
