#!/usr/bin/env bash
# Checks what needs Node.js: lints web/openapi.json with Redocly CLI, checks real answers of the
# service against it through Prism's validating proxy, feeds the served document to a typed
# client generator and to Postman's converter and runs what they make, runs the conformance kit
# against json-server (kit.test.mjs, with json-server/posts.json), and drives the API explorer
# page in Debian's Chromium (browser.test.mjs; accessibility.test.mjs: axe-core and a keyboard-only
# walk). Each runs against a binary freshly built from this repository, started on a free loopback
# port with -sample-data; the clients step also starts one with -tls-cert, using a certificate made
# for the run by Go's own crypto/tls/generate_cert.go, which Node.js trusts (NODE_EXTRA_CA_CERTS).
#
#   e2e/run.sh [lint|conformance|clients|kit|browser|all]     (default: all)
#
# Exit status 0 when every step asked for passed, 1 when one failed, and 77 when the browser test
# could not run because Chromium is missing (CHROMIUM, default /usr/bin/chromium) and the other
# steps passed: the caller reports that as a skip. Under CI (CI set) a missing Chromium fails.
# The npm packages are installed from package-lock.json when they are missing or older; npm never
# downloads a browser (PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD). Screenshots go to e2e/screenshots/, or
# to SCREENSHOTS_DIR when it is set.
set -euo pipefail
cd "$(dirname "$0")"

what=${1:-all}
case $what in lint | conformance | clients | kit | browser | all) ;; *) echo "usage: $0 [lint|conformance|clients|kit|browser|all]" >&2; exit 2 ;; esac
want() { [ "$what" = all ] || [ "$what" = "$1" ]; }

export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 # the package's own browser download cannot work here
export CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
browser_skipped=
if want browser && [ ! -x "$CHROMIUM" ]; then
  if [ -n "${CI:-}" ]; then # CI installs Chromium first (.ci/run): there a missing one is a failure
    echo "FAILED: CI must run the browser test, but there is no Chromium at $CHROMIUM" >&2
    exit 1
  fi
  browser_skipped=1
  want() { [ "$1" != browser ] && { [ "$what" = all ] || [ "$what" = "$1" ]; }; }
fi

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi

if want lint; then
  echo "== Redocly CLI: lint web/openapi.json"
  node_modules/.bin/redocly lint ../web/openapi.json --format=stylish # rules: redocly.yaml
fi

if want conformance || want clients || want kit || want browser; then
  # The tests start the binary themselves (services.mjs), each on a free port of 127.0.0.1.
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  (cd .. && go build -o "$work/users" . && go build -o "$work/conformance" ./conformance)
  random() { od -An -N12 -tx1 /dev/urandom | tr -d ' \n'; }
  export USERS_BIN="$work/users" KIT_BIN="$work/conformance" WRITE_TOKEN="e2e-write-$(random)" READ_TOKEN="e2e-read-$(random)"
  (cd "$work" && go run "$(go env GOROOT)/src/crypto/tls/generate_cert.go" --host 127.0.0.1,localhost --ecdsa-curve P256 --ca)
  export TLS_CERT="$work/cert.pem" TLS_KEY="$work/key.pem" NODE_EXTRA_CA_CERTS="$work/cert.pem"

  if want conformance; then
    echo "== Prism's validating proxy: real answers of the service against web/openapi.json"
    node --test --test-reporter=spec conformance.test.mjs
  fi
  if want clients; then
    echo "== Generated clients: a typed client (openapi-typescript, openapi-fetch, tsc --strict) and Postman's collection (newman)"
    node --test --test-reporter=spec clients.test.mjs
  fi
  if want kit; then
    echo "== The conformance kit against json-server 0.17.4, described by json-server/posts.json (no browser needed)"
    node --test --test-reporter=spec kit.test.mjs
  fi
  if want browser; then
    echo "== Chromium: the API explorer page (screenshots in e2e/screenshots/), with axe and the keyboard"
    node --test --test-reporter=spec browser.test.mjs accessibility.test.mjs
  fi
fi

if [ -n "$browser_skipped" ]; then
  echo "SKIPPED: the browser test needs Chromium at $CHROMIUM (apt-get install chromium)"
  exit 77
fi
