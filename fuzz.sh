#!/usr/bin/env bash
# Runs every fuzz target of the package, one after the other, each for FUZZTIME seconds on top of
# its seed corpus (the f.Add seeds and testdata/fuzz/<FuzzName>/).
#
#   ./fuzz.sh                 each target for 10 s
#   FUZZTIME=60 ./fuzz.sh     each target for 60 s (a Go duration such as 2m also works)
#   ./fuzz.sh FuzzRequest     only the targets named
#
# A failing input is saved under testdata/fuzz/<FuzzName>/ and the script stops with status 1:
# commit that file with the fix, and it stays a seed that `go test` runs every time.
set -euo pipefail
cd "$(dirname "$0")"

fuzztime="${FUZZTIME:-10}"
if [[ "$fuzztime" =~ ^[0-9]+$ ]]; then
  fuzztime="${fuzztime}s"
fi

if [ $# -gt 0 ]; then
  targets=("$@")
else
  targets=($(go test -list '^Fuzz' . | grep '^Fuzz'))
fi
if [ ${#targets[@]} -eq 0 ]; then
  echo "fuzz.sh: no fuzz targets found" >&2
  exit 1
fi

for target in "${targets[@]}"; do
  printf '\n== %s for %s\n' "$target" "$fuzztime"
  go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" .
done
printf '\nfuzz.sh: %d targets, %s each: no failure found.\n' "${#targets[@]}" "$fuzztime"
