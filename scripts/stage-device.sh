#!/usr/bin/env bash
# Stages gpumem for a GPU machine that has no Node.js, no npm and no network (docs/gpu-checks.md):
#   .device/gpumem.mjs        the CLI as one file (esbuild bundle of dist/cli/bin.js)
#   .device/status-bench.mjs  the NVML vs nvidia-smi sample benchmark (bench/gpu/status-bench.ts)
#   .device/node_modules/     koffi (linux-x64 .node only) and better-sqlite3 (+ bindings), the two
#                             dependencies that load native code and so stay outside the bundle
#   .device/package.json, .device/python/, .device/examples/   what the CLI finds next to itself
#   .device/dist/server/assets/  the dashboard's files, read by `gpumem serve` at start
#   .device/dist/supervise/watchdog-main.js  the run watchdog, a program `gpumem run` starts by path
#   .device/node.gz           a Linux x86-64 node of this machine's version (../shared/gpu/stage-node.sh)
# .device/ is git-ignored; carry it to the GPU machine and run `bash bench/gpu/run-all.sh` there.
# Usage: bash scripts/stage-device.sh [--no-build] [--no-node] [--out DIR]
#   --no-build  bundle dist/ as it is; --no-node  skip node.gz; --out DIR  stage into DIR instead of .device
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
dev=.device
build=1
with_node=1
while (( $# > 0 )); do
  case $1 in
    --no-build) build=0 ;;
    --no-node) with_node=0 ;;
    --out) dev=${2:?--out needs a folder}; shift ;;
    *) echo "stage-device: unknown argument $1 (known: --no-build, --no-node, --out DIR)" >&2; exit 2 ;;
  esac
  shift
done

if (( build )); then
  if ! npm run build --silent; then
    [[ -f dist/cli/bin.js ]] || { echo "stage-device: build failed and there is no dist/cli/bin.js" >&2; exit 1; }
    echo "stage-device: warning: tsc reported errors; bundling dist/ as it was emitted" >&2
  fi
fi

mkdir -p "$dev"
# Everything but the staged node is rebuilt each time, so nothing stale travels.
rm -rf "$dev/gpumem.mjs" "$dev/status-bench.mjs" "$dev/node_modules" "$dev/python" "$dev/examples" "$dev/package.json" "$dev/dist"
node scripts/bundle-device.mjs "$dev"
# The bundle reads files at the paths its modules had under dist/ (scripts/bundle-device.mjs): the server's
# page, styles and charts library are read from dist/server/assets/ when `gpumem serve` starts.
mkdir -p "$dev/dist/server"
cp -r dist/server/assets "$dev/dist/server/"

nm="$dev/node_modules"
mkdir -p "$nm/koffi/build/koffi/linux_x64" "$nm/better-sqlite3/build/Release"
cp node_modules/koffi/package.json node_modules/koffi/index.js "$nm/koffi/"
cp node_modules/koffi/build/koffi/linux_x64/koffi.node "$nm/koffi/build/koffi/linux_x64/"
cp node_modules/better-sqlite3/package.json "$nm/better-sqlite3/"
cp -r node_modules/better-sqlite3/lib "$nm/better-sqlite3/"
cp node_modules/better-sqlite3/build/Release/better_sqlite3.node "$nm/better-sqlite3/build/Release/"
# better-sqlite3 finds its .node through `bindings`, which needs file-uri-to-path.
for dep in bindings file-uri-to-path; do
  mkdir -p "$nm/$dep"
  cp node_modules/$dep/package.json node_modules/$dep/*.js "$nm/$dep/"
done

cp package.json "$dev/"
# Which code the GPU results come from: the commit, and whether the tree had changes on top of it.
echo "$(git rev-parse HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- src bench python 2>/dev/null || echo '+changes')" >"$dev/commit.txt"
# python/ without caches; examples/ as committed.
mkdir -p "$dev/python"
tar -C python --exclude=__pycache__ --exclude='*.pyc' -cf - . | tar -C "$dev/python" -xf -
cp -r examples "$dev/"

if (( with_node )) && [[ ! -s $dev/node.gz ]]; then
  if [[ -f ../shared/gpu/stage-node.sh ]]; then
    bash ../shared/gpu/stage-node.sh
  else
    echo "stage-device: ../shared/gpu/stage-node.sh is not here, so .device/node.gz is missing;" >&2
    echo "  put a gzip'd Linux x86-64 node $(node -p 'process.versions.node') there before using the GPU machine" >&2
  fi
fi

[[ $dev != .device ]] || git check-ignore -q "$dev/" || echo "stage-device: warning: .device/ is not git-ignored (add /.device/ to .gitignore)" >&2
du -sh "$dev"
size_kib=$(du -sk "$dev" | cut -f1)
if (( size_kib > 64 * 1024 )); then
  echo "stage-device: .device is over 64 MiB; the device tool will not carry it" >&2
  exit 1
fi
