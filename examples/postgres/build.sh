#!/usr/bin/env bash
# examples/postgres/build.sh DIR: assembles the service over PostgreSQL in DIR and builds it there,
# as DIR/users. This folder alone does not compile: its files replace two pieces of the
# repository's service and use all the rest, which stays at the repository's root. So the script
# does what README.md's "Make the copy" tells a copier to do: it copies the root's .go files that
# are not tests, and web/, then this folder's store.go (for the root's), schema.sql, openstore.go
# (for main.go's openStore, which it cuts out), go.mod and go.sum.
set -euo pipefail
[ $# = 1 ] || { echo "usage: $0 DIR (a new or empty folder)" >&2; exit 2; }
mkdir -p "$1"
app=$(cd "$1" && pwd)
cd "$(dirname "$0")"
root=$(cd ../.. && pwd)

for file in "$root"/*.go; do
  case $file in *_test.go) ;; *) cp "$file" "$app/" ;; esac
done
cp -r "$root/web" "$app/"
cp store.go schema.sql openstore.go go.mod go.sum "$app/"
# main.go without its openStore, from the function's doc comment to its closing brace.
awk '/^\/\/ openStore /{ skip = 1 } skip && /^}/ { skip = 0; next } !skip' "$root/main.go" >"$app/main.go"
if ! grep -q 'func openStore' "$root/main.go" || grep -q 'func openStore' "$app/main.go"; then
  echo "$0: main.go's openStore was not found" >&2
  exit 1
fi
gofmt -w "$app/main.go" # the cut leaves two blank lines where the function was
cd "$app"
go vet .
go build -o users .
echo "built $app/users"
