#!/usr/bin/env bash
# The one command that checks everything: ./test.sh
# It runs every check this machine can run and names each one it skips, and why.
set -euo pipefail
cd "$(dirname "$0")"

skipped=()
step() { printf '\n== %s\n' "$*"; }

step "gofmt: every file formatted"
unformatted=$(gofmt -l . | grep -v '^e2e/node_modules/' || true)
if [ -n "$unformatted" ]; then
  echo "gofmt would change:"; echo "$unformatted"; exit 1
fi

step "go vet"
go vet ./...

if command -v gcc >/dev/null 2>&1 || command -v cc >/dev/null 2>&1; then
  step "go test -race (the race detector needs a C compiler: found one)"
  CGO_ENABLED=1 go test -race -count=1 ./...
else
  step "go test (no C compiler, so without -race)"
  skipped+=("the race detector: no C compiler (install gcc)")
  go test -count=1 ./...
fi

step "the conformance kit against the built service: go run ./conformance, every rule of every tier"
kitdir=$(mktemp -d)
go build -o "$kitdir/users" .
USERS_TOKENS="kit-write-token:write,kit-read-token:read" \
  "$kitdir/users" -addr 127.0.0.1:0 -cors-origin http://localhost:3000 2>"$kitdir/log" &
server=$!
addr=""
for _ in $(seq 100); do # up to 10 s for the start-up log to name the address it bound
  addr=$(sed -n 's/.*msg=listening addr=\([^ ]*\).*/\1/p' "$kitdir/log")
  if [ -n "$addr" ]; then break; fi
  sleep 0.1
done
rc=0
if [ -z "$addr" ]; then
  echo "the service did not start:"; cat "$kitdir/log"; rc=1
else
  USERS_WRITE_TOKEN=kit-write-token USERS_READ_TOKEN=kit-read-token \
    go run ./conformance -url "http://$addr" || rc=$?
fi
kill "$server"; wait "$server" || true
rm -rf "$kitdir"
if [ $rc -ne 0 ]; then exit $rc; fi

step "go test under Go 1.22, the oldest Go that go.mod allows"
if GOTOOLCHAIN=go1.22.12 go version >/dev/null 2>&1; then
  GOTOOLCHAIN=go1.22.12 go test -count=1 ./...
else
  skipped+=("the tests under Go 1.22: the go1.22.12 toolchain could not be downloaded")
fi

step "fuzzing: each fuzz target for ${FUZZTIME:-10}s on top of its seeds (./fuzz.sh)"
./fuzz.sh

step "OpenAPI lint, answers checked against the document, generated clients, and the page in Chromium (e2e/run.sh)"
if ! command -v npm >/dev/null 2>&1; then
  skipped+=("e2e/ (OpenAPI lint, conformance, generated clients, browser tests): needs Node.js 20.19+ and npm")
else
  # Screenshots go to a temporary folder, so that a run leaves the work tree as it was.
  rc=0; SCREENSHOTS_DIR=$(mktemp -d) e2e/run.sh all || rc=$?
  if [ $rc -eq 77 ]; then skipped+=("the browser test: no Chromium (apt-get install chromium)")
  elif [ $rc -ne 0 ]; then exit $rc; fi
fi

step "PostgreSQL: the service over a database, two processes on one, the kit and races (examples/postgres/check.sh)"
rc=0; examples/postgres/check.sh || rc=$?
if [ $rc -eq 77 ]; then skipped+=("the PostgreSQL check: no PostgreSQL server (apt-get install postgresql)")
elif [ $rc -ne 0 ]; then exit $rc; fi

step "the container image: build it, replay README's \"Run it in a container\", the kit against it (container/check.sh)"
rc=0; container/check.sh || rc=$?
if [ $rc -eq 77 ]; then skipped+=("the container check: needs Podman, runc and busybox (apt-get install podman runc busybox-static)")
elif [ $rc -ne 0 ]; then exit $rc; fi

echo
if [ ${#skipped[@]} -eq 0 ]; then
  echo "All checks ran; none skipped."
else
  echo "Skipped:"
  for s in "${skipped[@]}"; do echo "  - $s"; done
fi
