#!/usr/bin/env bash
# Every GPU check in one call of at most 8 minutes, on a machine with an NVIDIA GPU (docs/gpu-checks.md).
# Run from the repository root after scripts/stage-device.sh, with .device/ carried along and OUT set to the
# folder whose files come back:
#   bash bench/gpu/run-all.sh [--dry-run] [all | STEP...]        (default: all)
# all: env, then the checks that need a quiet GPU one after another (truth, bench), then lanes in parallel
# (accuracy, companion, snapshot, record): per-process numbers do not care about neighbours. On request only,
# as named steps: pipeline, fit (fit searches the largest batch, so it needs the GPU to itself).
# Each step runs in its own process group under `timeout`; one failure or hang never stops the rest. The whole
# call ends within GPU_CHECK_BUDGET_S (default 480 s). Each step's result is packed into $OUT the moment it
# finishes, so a call cut short still returns what was done; the summary table is printed last.
# --dry-run (no GPU needed): the same steps and lanes on the fake NVML driver, the fake nvidia-smi, the fake
# torch and the committed H100 snapshots (bench/gpu/steps.sh says what each leaves out); test/bench/gpu-kit.test.ts.
# Results: $OUT/gpu-check-<label>.tar.gz (every step's folder), $OUT/summary-<label>.json, $OUT/run-all-<label>.log.
# It never changes GPU settings and ends only processes it started.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root" || exit 1
here="$root/bench/gpu"

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*"; }

# wait_for FILE PID SECONDS: until FILE exists; fails early when PID has exited.
wait_for() {
  local file=$1 pid=$2 limit=$3 i
  for ((i = 0; i < limit * 10; i++)); do
    [[ -s $file ]] && return 0
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}

# stop PID: TERM, then KILL after 10 s, for a process this script started.
stop() {
  local pid=$1 i
  kill -TERM "$pid" 2>/dev/null || return 0
  for ((i = 0; i < 100; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  return 0
}

gpumem() { node "$GPUMEM_JS" "$@"; }

# shellcheck source=steps.sh
source "$here/steps.sh"

# ---------------------------------------------------------------- one step in its own process (re-entry)
if [[ ${1:-} == --step ]]; then
  STEP=$2
  "step_$2"
  exit $?
fi

# ---------------------------------------------------------------- options and environment
DRY=0
if [[ ${1:-} == --dry-run ]]; then DRY=1; shift; fi
: "${OUT:?OUT must name the folder whose files come back}"
budget=${GPU_CHECK_BUDGET_S:-480}
args=${*:-all}
quiet=(truth bench)
lanes=(accuracy companion snapshot record)
case ${1:-all} in
  all) label=all ;;
  *) label=steps; quiet=(); lanes=()
     for s in "$@"; do
       declare -F "step_$s" >/dev/null || { echo "run-all: unknown step $s (known: env truth bench accuracy companion snapshot record pipeline fit)" >&2; exit 2; }
       case $s in truth | bench | fit | pipeline) quiet+=("$s") ;; env) ;; *) lanes+=("$s") ;; esac
     done ;;
esac
((DRY)) && label=dry-run-$label
declare -A limit=([env]=30 [truth]=90 [bench]=90 [record]=150 [pipeline]=240 [companion]=200 [snapshot]=120 [fit]=420 [accuracy]=470)

W=$(mktemp -d)/gpu-check-$label
mkdir -p "$W" "$OUT"
export W DRY PYTHONUNBUFFERED=1
export XDG_DATA_HOME=$W/xdg   # run history and run folders of gpumem run/pipeline stay inside the results
exec > >(tee -a "$W/run-all.log") 2>&1

if ((DRY)); then
  # The built dist/ instead of the staged bundle; the fake driver (built by the test setup) with one H100 and
  # this shell as its process; the fake nvidia-smi first on PATH; the Python with torch on the CPU.
  export DEVICE=$root GPUMEM_JS=$root/dist/cli/bin.js
  export GPUMEM_NVML_LIB=$root/build/fake-nvml/590/libnvidia-ml.so.1 GPUMEM_FAKE_NVML_SCENARIO=$W/fake-scenario.txt
  [[ -f $GPUMEM_JS && -f $GPUMEM_NVML_LIB ]] || { echo "run-all --dry-run: needs dist/ and the fake driver (npm run build; any vitest run of the e2e tier builds build/fake-nvml)" >&2; exit 2; }
  printf 'driver 590.48.01\ncuda 13010\ndevice\nuuid GPU-00000000-0000-4000-8000-0000000000d0\nname NVIDIA H100 80GB HBM3\npci 00000000:17:00.0\nminor 0\nmemory 85520809984 502267904 1073741824\nutil 3 1\ntemp 31\npower 69000 700000\nprocess %d C 1073741824\n' "$$" >"$GPUMEM_FAKE_NVML_SCENARIO"
  export PATH=$root/test/fake-smi:$PATH
  PY=python3
  [[ -x $root/.venv/bin/python ]] && PY=$root/.venv/bin/python
else
  export DEVICE=$root/.device GPUMEM_JS=$root/.device/gpumem.mjs
  PY=python3
  if ! command -v node >/dev/null; then
    [[ -s .device/node.gz ]] || { echo "no node on PATH and no .device/node.gz: run scripts/stage-device.sh and carry .device" >&2; exit 2; }
    nb=$(mktemp -d) && gunzip -c .device/node.gz >"$nb/node" && chmod +x "$nb/node" && export PATH=$nb:$PATH
  fi
  [[ -f $GPUMEM_JS ]] || { echo "no .device/gpumem.mjs: run scripts/stage-device.sh and carry .device" >&2; exit 2; }
fi
export PY

started=$SECONDS
reserve=20   # kept for the last packing and the summary
log "gpu checks ($label): quiet ${quiet[*]:-none}, then lanes ${lanes[*]:-none}; node $(node --version); budget ${budget}s; results in $W"

# pack: every finished step's folder into $OUT now (one archive, replaced whole), with the summary so far.
pack() {
  (
    flock 9
    "$PY" "$here/summary.py" "$W" "$label" "$root" "$args" "$DRY" >"$W/summary.json.tmp" && mv "$W/summary.json.tmp" "$W/summary.json"
    local tarball=$OUT/gpu-check-$label.tar.gz excl=()
    find "$W" -type f -size +3M -printf '%P\t%s\n' >"$W/left-out.tsv"
    tar -C "$(dirname "$W")" -czf "$tarball.tmp" "$(basename "$W")" 2>/dev/null
    if (($(stat -c %s "$tarball.tmp") > 15 * 1024 * 1024)); then
      tar -C "$(dirname "$W")" -czf "$tarball.tmp" --exclude-from=<(cut -f1 "$W/left-out.tsv" | sed "s|^|$(basename "$W")/|") "$(basename "$W")" 2>/dev/null
    fi
    mv "$tarball.tmp" "$tarball"
    cp "$W/summary.json" "$OUT/summary-$label.json"
    cp "$W/run-all.log" "$OUT/run-all-$label.log" 2>/dev/null
  ) 9>"$W/.pack.lock"
}

# run_step NAME: one step under timeout, its status written and its results packed when it ends.
run_step() {
  local s=$1 t left t0 rc st
  mkdir -p "$W/$s"
  left=$((budget - (SECONDS - started) - reserve))
  t=${limit[$s]:-300}
  ((t > left)) && t=$left
  if ((t < 15)); then
    log "== $s: skipped, budget spent"
    echo "skipped 0 0 $((SECONDS - started)) $((SECONDS - started))" >"$W/$s/status"
    pack
    return
  fi
  log "== $s: started (limit ${t}s)"
  t0=$SECONDS
  STEP_LIMIT_S=$t timeout -k 10 "$t" bash "$here/run-all.sh" --step "$s" >"$W/$s/step.log" 2>&1
  rc=$?
  case $rc in
    0) st=ok ;;
    124 | 137) st=timeout ;;
    75) st=partial ;;   # stopped itself at its time budget, results so far kept; run the step again to go on
    *) st=failed ;;
  esac
  echo "$st $rc $((SECONDS - t0)) $((t0 - started)) $((SECONDS - started))" >"$W/$s/status"
  log "== $s: $st (exit $rc, $((SECONDS - t0))s): $(cat "$W/$s/headline.txt" 2>/dev/null)"
  pack
}

run_step env
for s in "${quiet[@]}"; do run_step "$s"; done
pids=()
for s in "${lanes[@]}"; do
  run_step "$s" &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done

pack
"$PY" "$here/summary.py" --table "$W/summary.json"
log "results: $(find "$OUT" -maxdepth 1 -type f -printf '%f (%s bytes) ')"
