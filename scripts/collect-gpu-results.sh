#!/usr/bin/env bash
# Unpacks what bench/gpu/run-all.sh sent back from a GPU machine into bench/results/<date>-<gpu>-<driver>/
# (one folder per machine and day; part1/part2/… side by side), writes an index README.md there, and with
# --promote-example replaces examples/doctor-example.ndjson by the real recording, but only when the
# recording shows the findings it was made for (record/verdict.json: showsIntendedFindings).
# Usage: bash scripts/collect-gpu-results.sh [--promote-example] FOLDER_OR_TARBALL...
#   (a FOLDER is searched for gpu-check-*.tar.gz, e.g. the device tool's files_at folder)
# See docs/gpu-checks.md.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
promote=0
inputs=()
for a in "$@"; do
  case $a in
    --promote-example) promote=1 ;;
    -h | --help) sed -n '2,9p' "$0"; exit 0 ;;
    *) inputs+=("$a") ;;
  esac
done
((${#inputs[@]})) || { echo "usage: $0 [--promote-example] FOLDER_OR_TARBALL..." >&2; exit 2; }

tarballs=()
for a in "${inputs[@]}"; do
  if [[ -d $a ]]; then
    while IFS= read -r f; do tarballs+=("$f"); done < <(find "$a" -name 'gpu-check-*.tar.gz' | sort)
  elif [[ -f $a ]]; then
    tarballs+=("$a")
  else
    echo "collect: no such file or folder: $a" >&2; exit 2
  fi
done
((${#tarballs[@]})) || { echo "collect: no gpu-check-*.tar.gz found" >&2; exit 2; }

dests=()
for t in "${tarballs[@]}"; do
  tmp=$(mktemp -d)
  tar -C "$tmp" -xzf "$t"
  src=$(find "$tmp" -mindepth 1 -maxdepth 1 -type d | head -1)
  [[ -f $src/summary.json ]] || { echo "collect: $t has no summary.json; skipped" >&2; rm -rf "$tmp"; continue; }
  # <date>-<gpu>-<driver>, e.g. 2026-11-22-nvidia-h100-80gb-hbm3-590.48.01
  name=$(python3 -c '
import json, re, sys
s = json.load(open(sys.argv[1]))
slug = lambda x: re.sub(r"[^a-z0-9.]+", "-", (x or "unknown").lower()).strip("-")
print("-".join([s["date"], slug(s.get("gpu")), slug(s.get("driver"))]))' "$src/summary.json")
  label=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["label"])' "$src/summary.json")
  dest=$root/bench/results/$name/$label
  rm -rf "$dest"
  mkdir -p "$dest"
  cp -r "$src"/. "$dest"/
  rm -rf "$tmp"
  echo "collect: $t -> ${dest#"$root"/}"
  dests+=("$(dirname "$dest")")
done

# An index per machine/day folder: what ran, where, with which result.
for d in $(printf '%s\n' "${dests[@]}" | sort -u); do
  python3 - "$d" >"$d/README.md" <<'EOF'
import glob, json, os, sys
d = sys.argv[1]
out = [f"# GPU checks: {os.path.basename(d)}", "",
       "Made by `bash bench/gpu/run-all.sh PART` on a GPU machine (docs/gpu-checks.md) and unpacked by",
       "`scripts/collect-gpu-results.sh`. Each part's `summary.json` has the versions and every step's status;",
       "`run-all.log` the whole console output; each step's folder its own `step.log`.", ""]
for s in sorted(glob.glob(os.path.join(d, "*", "summary.json"))):
    j = json.load(open(s))
    out += [f"## {j['label']}", "",
            f"- date {j['time']}; GPU {j.get('gpu')}; driver {j.get('driver')}; CUDA (driver) {j.get('cudaDriver')}; "
            f"torch {j.get('torch')} (CUDA {j.get('torchCuda')}); node {j.get('node')}; gpumem at {j.get('gpumemCommit')}",
            f"- command: `{j['command']}`", "", "| step | status | exit | seconds |", "|---|---|---|---|"]
    out += [f"| {k} | {v['status']} | {v['exitCode']} | {v['seconds']} |" for k, v in j["steps"].items()]
    out.append("")
print("\n".join(out))
EOF
  echo "collect: wrote ${d#"$root"/}/README.md"
  if ((promote)); then
    verdict=$(find "$d" -path '*/record/verdict.json' | head -1)
    rec=${verdict%/verdict.json}/doctor-recording.ndjson
    if [[ -n $verdict && -s $rec ]] && python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["showsIntendedFindings"] else 1)' "$verdict"; then
      cp "$rec" "$root/examples/doctor-example.ndjson"
      echo "collect: examples/doctor-example.ndjson replaced by the real recording (${rec#"$root"/})"
      echo "  check: node dist/cli/bin.js doctor --replay examples/doctor-example.ndjson; then run the diagnose/doctor tests"
    else
      echo "collect: no recording that shows the intended findings (${verdict:-no record/verdict.json}); examples/ left as it is" >&2
    fi
  fi
  xml=$(find "$d" -path '*/truth/nvidia-smi-q.xml' | head -1)
  [[ -n $xml ]] && echo "collect: real nvidia-smi XML: ${xml#"$root"/} (a fixture for test/fixtures/nvidia-smi/ once its totals are asserted in the smi tests)"
  for s in $(find "$d" -path '*/snapshot/*.pickle' -o -path '*/run-folder/*.pickle' | sort); do
    echo "collect: real snapshot: ${s#"$root"/} ($(du -h "$s" | cut -f1)); torch's numbers beside it in ${s%.pickle}.torch-stats.json"
  done
done
