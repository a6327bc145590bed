#!/usr/bin/env bash
# bench/tls.sh: what HTTPS costs beside plain HTTP, measured with wrk against the built binary.
#
# It makes an ECDSA P-256 certificate for 127.0.0.1 with Go's own crypto/tls/generate_cert.go (the
# kind tls_test.go makes), starts the service twice on free loopback ports with -sample-data, once
# plain and once with -tls-cert and -tls-key, and runs wrk on GET one user (/api/users/1) against
# each, in two ways:
#   keep-alive  wrk's connections stay open: what TLS adds to a request once the handshake is done
#   new-conn    Connection: close, so that every request opens a connection: TCP, and for HTTPS a
#               TLS handshake. wrk (OpenSSL) resumes the TLS session of its previous connection,
#               so these are resumed TLS 1.3 handshakes, which still agree a new key; a full one
#               is BenchmarkTLSHandshake in tls_bench_test.go
# wrk speaks HTTP/1.1 only; BenchmarkGetUserOverLoopback in tls_bench_test.go adds HTTP/2.
#
# It prints each run, then medians over the rounds of requests per second, latency p50 and p99,
# and the server's CPU time per request (user + system, /proc/PID/stat); then HTTPS beside HTTP:
# the ratio of throughput, and the CPU per request HTTPS adds, which on new-conn is the server's
# share of a resumed handshake.
#
# Usage: bench/tls.sh     about 1.5 minutes; the environment can shorten it:
#   DURATION=5  seconds each run is measured     ROUNDS=3        rounds (medians are taken)
#   WARMUP=1    seconds of load before each      CONNECTIONS=64  wrk connections (THREADS=2)
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=${DURATION:-5} ROUNDS=${ROUNDS:-3} WARMUP=${WARMUP:-1}
CONNECTIONS=${CONNECTIONS:-64} THREADS=${THREADS:-2}
TOKEN=bench-read

source bench/common.sh # wrk, $work, pids and stop_all, wait_for_line, cpu_ticks and clock_ticks

echo "building the service and a certificate for 127.0.0.1"
go build -o "$work/users" .
(cd "$work" && go run "$(go env GOROOT)/src/crypto/tls/generate_cert.go" --host 127.0.0.1 --ecdsa-curve P256 2>/dev/null)

# measure NAME PID URL MODE: one wrk run (after a warm-up), appended to results as one line:
# mode name req/s p50_us p99_us cpu_us_per_request.
measure() {
  local name=$1 pid=$2 url=$3 mode=$4 before after out
  local headers=(-H "Authorization: Bearer $TOKEN")
  if [ "$mode" = new-conn ]; then headers+=(-H "Connection: close"); fi
  wrk -t"$THREADS" -c"$CONNECTIONS" -d"${WARMUP}s" "${headers[@]}" "$url/api/users/1" >/dev/null
  before=$(cpu_ticks "$pid")
  out=$(wrk -t"$THREADS" -c"$CONNECTIONS" -d"${DURATION}s" --latency "${headers[@]}" "$url/api/users/1")
  after=$(cpu_ticks "$pid")
  if grep -qE 'Non-2xx|Socket errors' <<<"$out"; then
    echo "  warning: $name $mode: $(grep -E 'Non-2xx|Socket errors' <<<"$out" | tr -s ' ')" >&2
  fi
  awk -v name="$name" -v mode="$mode" -v ticks=$((after - before)) -v hz="$clock_ticks" '
    function us(v) { return v ~ /ms$/ ? v * 1000 : v ~ /us$/ ? v + 0 : v * 1e6 } # wrk prints 10.5us, 1.2ms or 1.1s
    $1 == "50%" { p50 = us($2) } $1 == "99%" { p99 = us($2) }
    / requests in / { requests = $1 }
    $1 == "Requests/sec:" { rps = $2 }
    END { printf "%s %s %.0f %.0f %.0f %.2f\n", mode, name, rps, p50, p99, ticks * 1e6 / hz / requests }
  ' <<<"$out" | tee -a "$work/results"
}

echo "$(nproc) cores; wrk: $THREADS threads, $CONNECTIONS connections, ${DURATION}s per run, $ROUNDS rounds"
echo "mode name req/s p50_us p99_us cpu_us_per_request"
for round in $(seq "$ROUNDS"); do
  echo "-- round $round"
  USERS_TOKENS="$TOKEN:read" "$work/users" -addr 127.0.0.1:0 -sample-data 2>"$work/http.log" &
  http_pid=$!; pids+=("$http_pid")
  USERS_TOKENS="$TOKEN:read" "$work/users" -addr 127.0.0.1:0 -sample-data \
    -tls-cert "$work/cert.pem" -tls-key "$work/key.pem" 2>"$work/https.log" &
  https_pid=$!; pids+=("$https_pid")
  http_url=$(wait_for_line "$work/http.log" 'msg=listening' | grep -oE 'url=[^ ]+' | cut -d= -f2)
  https_url=$(wait_for_line "$work/https.log" 'msg=listening' | grep -oE 'url=[^ ]+' | cut -d= -f2)
  for mode in keep-alive new-conn; do
    measure http "$http_pid" "$http_url" "$mode"
    measure https "$https_pid" "$https_url" "$mode"
  done
  stop_all
done

# median MODE NAME COLUMN: the median over the rounds of one column of the results.
median() {
  awk -v m="$1" -v n="$2" -v c="$3" '$1 == m && $2 == n { print $c }' "$work/results" | sort -g |
    awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

echo
echo "Medians of $ROUNDS rounds ($(nproc) cores, wrk -c$CONNECTIONS, ${DURATION}s each): GET /api/users/1"
printf '%-10s | %-31s | %-31s | %s\n' mode "HTTP: req/s p50 p99 CPU/req" "HTTPS: req/s p50 p99 CPU/req" \
  "HTTPS/HTTP req/s, CPU/req HTTPS adds"
for mode in keep-alive new-conn; do
  line=$mode
  for name in http https; do
    for column in 3 4 5 6; do line="$line $(median "$mode" "$name" "$column")"; done
  done
  echo "$line" | awk '{
    printf "%-10s | %7.0f %5.0fus %6.0fus %5.1fus | %7.0f %5.0fus %6.0fus %5.1fus | %.2fx, %+.1fus\n",
      $1, $2, $3, $4, $5, $6, $7, $8, $9, $6 / $2, $9 - $5
  }'
done
