#!/usr/bin/env bash
# bench/edit.sh: what editing the data file while the server runs costs. It saves an edit 20 times
# as an editor does (a new file renamed over the data file), each at a random point of the server's
# second, and times each save to the first GET that shows it; then it runs two idle servers for
# IDLE seconds, one with -data and one without, and prints the CPU each used (/proc/PID/stat).
#
# Usage: bench/edit.sh     (about 2.5 minutes; IDLE=120)
set -euo pipefail
cd "$(dirname "$0")/.."

IDLE=${IDLE:-120}
source bench/common.sh # $work, pids and stop_all, wait_for_line, cpu_ticks, clock_ticks

go build -o "$work/users" .
cd "$work"
address() { wait_for_line "$1" 'msg=listening' | grep -oE 'addr=[^ ]+' | cut -d= -f2; }

USERS_TOKENS="w:write,r:read" ./users -addr 127.0.0.1:0 -data users.json 2>edit.log &
pids+=($!)
url=http://$(address edit.log)
for i in $(seq 20); do
  sleep "0.$((RANDOM % 10))"
  printf '{"users": [{"id": 1, "name": "Edit %d", "email": "edit@example.com"}]}\n' "$i" >.users.json.swp
  mv .users.json.swp users.json
  saved=$(date +%s%N)
  until curl -s -H 'Authorization: Bearer r' "$url/api/users" | grep -q "\"Edit $i\""; do sleep 0.005; done
  echo $((($(date +%s%N) - saved) / 1000000))
done >latencies
sort -n latencies | awk '{ v[NR] = $1 } END { printf "save to the first GET that shows it, 20 saves: median %d ms, worst %d ms\n", (v[10] + v[11]) / 2, v[NR] }'
stop_all

USERS_TOKENS="w:write" ./users -addr 127.0.0.1:0 -data idle.json 2>with.log &
with=$!
USERS_TOKENS="w:write" ./users -addr 127.0.0.1:0 2>without.log &
without=$!
pids+=("$with" "$without")
address with.log >/dev/null && address without.log >/dev/null
with0=$(cpu_ticks "$with") without0=$(cpu_ticks "$without")
sleep "$IDLE"
awk -v a=$(($(cpu_ticks "$with") - with0)) -v b=$(($(cpu_ticks "$without") - without0)) -v hz="$clock_ticks" -v s="$IDLE" 'BEGIN {
  printf "idle for %d s: %.0f ms of CPU with -data, %.0f ms without: about %.1f s an hour for the looks at the file\n",
    s, a * 1000 / hz, b * 1000 / hz, (a - b) / hz * 3600 / s }'
