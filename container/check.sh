#!/usr/bin/env bash
# The container check: container/check.sh (a step of ./test.sh).
#
# It builds the image of ../Dockerfile with Podman and replays the commands of README.md's section
# "Run it in a container": every line of that section's ```sh blocks, as written there, in order
# (the build, the run with -sample-data, the env file, the volume, the detached run, the curl that
# creates a user, the stop and rm, a new container on the same volume, the curl that reads the user
# back, the stop and rm before the HTTPS container, the HTTPS container and its curl). Then it runs
# the conformance kit against the published port, checks that `docker stop` ends the server with
# exit status 0 within the stop time, and that a data file mounted on its own stops the server.
#
# Exit status: 0 when it passed, 1 when it failed, 77 when this machine cannot run it (no Podman,
# or no busybox for the stand-in below), which ./test.sh reports as skipped. CI installs both
# (.ci/run). A Docker engine alone is not used: the check keeps to a store of its own (below), so
# that it never touches the machine's images and volumes, and Docker has no such thing.
#
# Podman resolves image names as the machine configures it: /etc/containers/registries.conf and
# registries.conf.d are read as they are (Debian's: no registry to search for a short name, aliases
# for a few, none for golang), and the variables that would point Podman elsewhere are unset. None of
# the overrides below is about image names. What differs from the README, and why:
#   - `docker` runs `podman`, which takes the same arguments.
#   - Podman keeps this run's images, containers and volumes in a store of its own in a temporary
#     folder (--root, --runroot), and its run-time state there too (--tmpdir: the marker that tells
#     Podman whether a store needs refreshing after a reboot, the containers' exit files, the events
#     log), so the machine's own Podman is never touched, and everything the check made is gone at
#     the end.
#   - Two overrides that these machines need to run any container at all:
#       --runtime runc, where runc is installed: crun, which Podman prefers when both are installed
#       (and which `apt-get install podman` alone brings), refuses every container here ("cgroups in
#       hybrid mode not supported").
#       default_ulimits = [] (containers.conf): as root, Podman raises each container's open-files
#       limit to 1048576, and these machines refuse any process, root included, a hard limit above
#       the one it has (runc: "error setting rlimit type 7: operation not permitted"). With no
#       default, a container keeps the limits Podman runs with. Podman 4.3 reads CONTAINERS_CONF
#       instead of the machine's containers.conf, not on top of it, so the check's file is the
#       machine's own with that one setting added.
#   - The host ports 8080 and 8443 of the README's lines become free ports Podman picks (127.0.0.1
#     only), so the check runs beside anything that already listens on them.
#   - Machines here reach no image registry, so the build's Go stage runs on a stand-in for the
#     official Go image: the Go toolchain installed here, imported as a local image under the very
#     name the Dockerfile gives, so the README's build line needs nothing more. Podman also finds a
#     local image by a short name (golang:1.26 finds docker.io/library/golang:1.26, as Docker
#     does), so with the stand-in there a short name would pass unseen: the check first replays the
#     build line as a newcomer's machine runs it, with no image at all and no registry reachable
#     (HTTPS_PROXY at a closed port), where it must get as far as asking the registry.
#   - Between a `docker run -d` and the next curl, the check waits for /healthz, as a reader does.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

if ! command -v podman >/dev/null 2>&1; then
  if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
    echo "container check skipped: a Docker engine runs, but the check needs Podman (apt-get install podman runc)"
  else
    echo "container check skipped: no Podman (apt-get install podman runc)"
  fi
  exit 77
fi
busybox=$(command -v busybox) || { echo "container check skipped: no busybox for the stand-in Go image (apt-get install busybox-static)"; exit 77; }

work=$(mktemp -d)
started=$(date +%s)

# The machine's registries.conf, and nothing else, decides how names resolve.
unset CONTAINERS_REGISTRIES_CONF REGISTRIES_CONFIG_PATH
# The machine's containers.conf (the one in /etc where there is one, else the package's) with
# default_ulimits = [] in [containers], in place of any default_ulimits it has.
conf=/usr/share/containers/containers.conf
if [ -f /etc/containers/containers.conf ]; then conf=/etc/containers/containers.conf; fi
{ if [ -f "$conf" ]; then cat "$conf"; fi; } | awk '
  skip { if (/\]/) skip = 0; next }
  /^[ \t]*default_ulimits[ \t]*=/ { if (!/\]/) skip = 1; next }
  { print }
  /^[ \t]*\[containers\][ \t]*$/ { print "default_ulimits = []"; added = 1 }
  END { if (!added) print "[containers]\ndefault_ulimits = []" }' >"$work/containers.conf"
export CONTAINERS_CONF="$work/containers.conf"
podman_flags=(--root "$work/storage" --runroot "$work/run" --tmpdir "$work/tmp")
if command -v runc >/dev/null 2>&1; then podman_flags+=(--runtime runc); fi
podman() { command podman "${podman_flags[@]}" "$@"; }

cleanup() {
  podman rm --all --force --time 0 >/dev/null 2>&1 || true
  podman volume rm --all --force >/dev/null 2>&1 || true
  podman rmi --all --force >/dev/null 2>&1 || true
  # The store mounts its overlay folder on itself: unmount whatever is still mounted in $work.
  awk -v dir="$work/" 'index($2, dir) == 1 {print $2}' /proc/mounts | sort -r | xargs -r umount 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

fail() { echo "container check FAILED: $*" >&2; exit 1; }

# The README's section, and its commands: the lines of its ```sh blocks.
section=$(awk '/^## Run it in a container$/ {on=1; next} on && /^## / {exit} on' README.md)
[ -n "$section" ] || fail 'README.md has no section "## Run it in a container"'
commands=$(printf '%s\n' "$section" | awk '/^```sh$/ {on=1; next} /^```/ {on=0} on && NF')
: >"$work/replayed" # the lines replayed so far, one a line (a file, since some run in a subshell)

docker() { podman "$@"; }
port="" # the host port Podman published the last container on

# replay runs one line of the section's ```sh blocks, as written there, but for the changes listed
# at the top of this file. A line that is not in those blocks fails the check: the README changed.
replay() {
  local line=$1
  printf '%s\n' "$commands" | grep -Fxq -- "$line" || fail "README.md's section no longer has the line: $line"
  printf '%s\n' "$line" >>"$work/replayed"
  line=${line//127.0.0.1:8080:8080/127.0.0.1::8080}
  line=${line//127.0.0.1:8443:8080/127.0.0.1::8080}
  line=${line//localhost:8080/localhost:$port}
  line=${line//localhost:8443/localhost:$port}
  echo "+ $line" >&2
  eval "$line"
}

# published_port NAME sets port to the host port of container NAME's 8080.
published_port() { port=$(podman port "$1" 8080/tcp | sed -n '1s/.*://p'); }

# healthy waits up to 10 s for a 200 from /healthz on the published port; healthy https for HTTPS
# with the certificate the check made.
healthy() {
  local scheme=${1:-http}
  for _ in $(seq 500); do
    if curl -fs -o /dev/null --cacert "$work/tls/cert.pem" "$scheme://localhost:$port/healthz"; then return 0; fi
    sleep 0.02
  done
  fail "no 200 on /healthz within 10 s"
}

# equal fails unless the command's answer is the one expected.
equal() { [ "$1" = "$2" ] || fail "expected $2, got $1"; }

echo "== the build as on a newcomer's machine: no image, no registry reachable"
# Every name the Dockerfile gives must resolve with the machine's configuration, so that Podman
# gets as far as asking a registry for it, which the closed port then refuses. A short name with
# no alias fails before that, as it did for the newcomer ("short-name ... did not resolve").
out=$(
  export HTTPS_PROXY=http://127.0.0.1:1 https_proxy=http://127.0.0.1:1 HTTP_PROXY=http://127.0.0.1:1 http_proxy=http://127.0.0.1:1 NO_PROXY= no_proxy=
  replay 'docker build -t users .' 2>&1
) && fail "the build succeeded with no image and no registry: $out"
if grep -q 'short-name' <<<"$out"; then fail "a name in the Dockerfile does not resolve with this machine's Podman configuration, as for the newcomer: $out"; fi
grep -q 'proxyconnect' <<<"$out" || fail "the build did not get as far as asking a registry: $out"
grep -o 'Trying to pull [^ ]*' <<<"$out" | sort -u | sed 's/\.\.\.$/: the name resolves (no registry reachable)/'

echo "== the build, its Go stage on the stand-in image"
# The stand-in: the toolchain of `go env GOROOT` at the same path, with busybox's mkdir for the
# Dockerfile's one RUN ["mkdir", ...], an empty /tmp, and no network (GOPROXY=off): the service has
# no modules to download. Its name is the one of the Dockerfile's first FROM.
standin=$(awk 'toupper($1) == "FROM" {print $2; exit}' Dockerfile)
goroot=$(go env GOROOT)
mkdir -p "$work/skel/bin" "$work/skel/tmp" "$work/skel/root"
chmod 1777 "$work/skel/tmp"
cp "$busybox" "$work/skel/bin/busybox"
ln -s busybox "$work/skel/bin/mkdir"
tar -c -C / --exclude="${goroot#/}/test" "${goroot#/}" -C "$work/skel" bin tmp root |
  podman import --quiet --change "ENV PATH=$goroot/bin:/bin" --change "ENV HOME=/root" \
    --change "ENV GOPROXY=off" - "$standin" >/dev/null
echo "stand-in: $standin, Go $(go env GOVERSION)"
replay 'docker build -t users .'
echo "image size: $(podman image inspect users --format '{{.Size}}') bytes"

# The compose example's images are named in full too, but for the one the section builds.
short=$(printf '%s\n' "$section" | sed -n 's/^ *image: *//p' | grep -vx users | grep -Evx '(localhost|[^/]*[.:][^/]*)/.*' || true)
[ -z "$short" ] || fail "the compose example names an image by a short name: $short"

# tls/ holds a private key: git leaves it out (.dockerignore's first line, *, leaves it out of builds).
if git -C "$repo" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  git -C "$repo" check-ignore -q tls/key.pem || fail ".gitignore does not leave out tls/key.pem"
fi

cd "$work" # the env file and everything else the lines make land in the temporary folder

echo "== the run with -sample-data, and its graceful stop"
t0=$(date +%s%N)
replay 'docker run --rm -p 127.0.0.1:8080:8080 users -sample-data' >"$work/sample.log" 2>&1 &
runner=$!
for _ in $(seq 250); do # the container exists a moment after podman run starts
  id=$(podman ps --quiet --filter ancestor=localhost/users:latest)
  if [ -n "$id" ]; then break; fi
  sleep 0.02
done
[ -n "$id" ] || { cat "$work/sample.log"; fail "the -sample-data container did not start"; }
published_port "$id"
healthy
echo "podman run to the first 200 on /healthz: $((($(date +%s%N) - t0) / 1000000)) ms"
equal "$(curl -fsS "http://127.0.0.1:$port/healthz")" '{"status":"ok"}' # as the README's "Health" says
token=$(sed -n 's/^  read token: *//p' "$work/sample.log")
equal "$(curl -fsS -H "Authorization: Bearer $token" "http://127.0.0.1:$port/api/users/1")" \
  '{"id":1,"name":"Ada Lovelace","email":"ada@example.com"}'
t0=$(date +%s%N)
podman stop --time 10 "$id" >/dev/null
status=0; wait "$runner" || status=$?
stopped=$((($(date +%s%N) - t0) / 1000000))
grep -q 'msg=stopped' "$work/sample.log" || { cat "$work/sample.log"; fail "the server did not stop gracefully"; }
equal "$status" 0
[ "$stopped" -lt 10000 ] || fail "podman stop took $stopped ms: the server did not stop before the 10 s grace"
echo "podman stop: exit status 0 after $stopped ms"

echo "== the env file, the volume, a user written, and read back from a new container"
printf '%s\n' "$section" | awk '/^```sh$/ {on=1; next} /^```/ {on=0} on && /^USERS_TOKENS=/' >users.env
cat users.env >>"$work/replayed"
[ "$(cat users.env)" = "USERS_TOKENS=s3cr3t-w:write,s3cr3t-r:read" ] || fail "users.env is not the README's"
replay 'docker volume create users-data'
replay 'docker run -d --name users --env-file users.env -p 127.0.0.1:8080:8080 -v users-data:/data users -data /data/users.json'
published_port users
healthy
replay "curl -H 'Authorization: Bearer s3cr3t-w' -H 'Content-Type: application/json' -d '{\"name\": \"Grace Hopper\", \"email\": \"grace@example.com\"}' http://localhost:8080/api/users" >answer
equal "$(cat answer)" '{"id":1,"name":"Grace Hopper","email":"grace@example.com"}'
replay 'docker stop users && docker rm users'
replay 'docker run -d --name users --env-file users.env -p 127.0.0.1:8080:8080 -v users-data:/data users -data /data/users.json'
published_port users
healthy
replay "curl -H 'Authorization: Bearer s3cr3t-r' http://localhost:8080/api/users/1" >answer
answer=$(cat answer)
grep -Fq "It answers \`$answer\`." "$repo/README.md" || fail "README.md does not show the answer $answer"
equal "$answer" '{"id":1,"name":"Grace Hopper","email":"grace@example.com"}'

echo "== the conformance kit against the container"
(cd "$repo" && USERS_WRITE_TOKEN=s3cr3t-w USERS_READ_TOKEN=s3cr3t-r go run ./conformance -url "http://127.0.0.1:$port")

echo "== docker stop on the container with the data file"
t0=$(date +%s%N)
podman stop --time 10 users >/dev/null
stopped=$((($(date +%s%N) - t0) / 1000000))
equal "$(podman inspect users --format '{{.State.ExitCode}}')" 0
[ "$stopped" -lt 10000 ] || fail "podman stop took $stopped ms: the server did not stop before the 10 s grace"
podman logs users 2>&1 | grep -q 'msg=stopped' || fail "the server did not log its graceful stop"
echo "podman stop: exit status 0 after $stopped ms"

echo "== HTTPS: the stop and rm, and a container with the TLS files mounted read-only"
# tls/ holds a certificate and key made as the README's section "HTTPS" makes them, with the key
# given to uid 65532 as this section says. The container the stop and rm name is stopped already
# (above); `docker stop` takes a stopped one too.
mkdir tls
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=localhost \
  -addext subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1 -keyout tls/key.pem -out tls/cert.pem 2>/dev/null
if [ "$(id -u)" -eq 0 ]; then chown 65532 tls/key.pem; else podman unshare chown 65532 tls/key.pem; fi
replay 'docker stop users && docker rm users' >/dev/null
replay 'docker run -d --name users --env-file users.env -p 127.0.0.1:8443:8080 -v users-data:/data -v "$PWD/tls:/tls:ro" users -data /data/users.json -tls-cert /tls/cert.pem -tls-key /tls/key.pem'
published_port users
healthy https
replay "curl --cacert tls/cert.pem -H 'Authorization: Bearer s3cr3t-r' https://localhost:8443/api/users/1" >answer
equal "$(cat answer)" '{"id":1,"name":"Grace Hopper","email":"grace@example.com"}'
podman stop --time 10 users >/dev/null
equal "$(podman inspect users --format '{{.State.ExitCode}}')" 0

# Every command of the section was replayed: a line added to the README is added here too.
unreplayed=$(printf '%s\n' "$commands" | grep -Fxv -f "$work/replayed" || true)
[ -z "$unreplayed" ] || fail "README.md's section has lines this check does not replay: $unreplayed"

echo "== a data file mounted on its own stops the server at start, saying to mount the folder"
# As the README's section says: each write replaces the file by a rename, which a file mounted on
# its own refuses, so the server, which writes the file once before it listens, stops (exit status 1).
echo '{"users": []}' >alone.json
status=0
podman run --rm -v "$PWD/alone.json:/data/users.json" --env-file users.env users -data /data/users.json \
  >/dev/null 2>"$work/alone.log" || status=$?
equal "$status" 1
grep -Eqi 'mount[^.]* folder' "$work/alone.log" || { cat "$work/alone.log"; fail "the refusal does not say to mount the folder"; }
echo "refused with exit status 1: $(cat "$work/alone.log")"

echo "container check passed in $(($(date +%s) - started)) s"
