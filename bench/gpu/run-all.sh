#!/usr/bin/env bash
# Every GPU check the issues ask for, in one go, on a machine with an NVIDIA GPU (docs/gpu-checks.md).
# Run from the repository root after scripts/stage-device.sh, with .device/ carried along and OUT set to
# the folder whose files come back:
#   bash bench/gpu/run-all.sh [part1 | part2 | all | STEP...]      (default: all)
# Steps: env truth bench record pipeline companion snapshot (= part1); env fit accuracy (= part2).
# Each step runs in its own process group under `timeout`, so one failure or hang never stops the rest,
# and the whole call ends within GPU_CHECK_BUDGET_S (default 570 s; the device tool allows 600).
# Results: $OUT/gpu-check-<label>.tar.gz (everything), $OUT/summary-<label>.json, $OUT/run-all-<label>.log.
# It never changes GPU settings and ends only processes it started.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root" || exit 1
here="$root/bench/gpu"

# ---------------------------------------------------------------- helpers
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

gpumem() { node "$root/.device/gpumem.mjs" "$@"; }

# ---------------------------------------------------------------- steps (each writes into $W/<step>/)
step_env() {
  local d=$W/env
  nvidia-smi -L >"$d/nvidia-smi-L.txt" 2>&1
  nvidia-smi >"$d/nvidia-smi.txt" 2>&1
  nvidia-smi --query-gpu=index,uuid,name,pci.bus_id,driver_version,memory.total,memory.reserved,compute_mode --format=csv >"$d/query-gpu.csv" 2>&1
  python3 - >"$d/versions.json" <<'EOF'
import json, platform, sys
info = {"python": sys.version.split()[0], "platform": platform.platform()}
try:
    import torch
    info.update(torch=torch.__version__, torchCuda=torch.version.cuda, cudnn=torch.backends.cudnn.version(),
                gpu=torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
                cudaAvailable=torch.cuda.is_available())
except Exception as e:
    info["torchError"] = repr(e)
for name in ("torchvision", "timm", "transformers", "safetensors", "numpy"):
    try:
        info[name] = __import__(name).__version__
    except Exception:
        info[name] = None
print(json.dumps(info, indent=2))
EOF
  node --version >"$d/node-version.txt"
  gpumem --version >"$d/gpumem-version.txt"
  cat "$d/versions.json"
}

# (a) issue 2 §7: nvidia-smi and gpumem status in the same call while PyTorch holds 1 GiB.
step_truth() {
  local d=$W/truth hp
  python3 "$here/hold_memory.py" --mib 1024 --ready "$d/holder.json" --seconds 120 &
  hp=$!
  wait_for "$d/holder.json" "$hp" 90 || { log "holder did not start"; stop "$hp"; return 1; }
  nvidia-smi -q -x >"$d/nvidia-smi-q.xml"
  nvidia-smi --query-gpu=memory.total,memory.reserved,memory.used,memory.free --format=csv,noheader,nounits >"$d/query-gpu.csv"
  nvidia-smi --query-compute-apps=pid,gpu_uuid,used_memory --format=csv,noheader,nounits >"$d/query-compute-apps.csv"
  gpumem status --json --source nvml >"$d/status-nvml.json"
  gpumem status --json --source smi >"$d/status-smi.json"
  gpumem status --no-color >"$d/status.txt"
  # Read again after ours: a difference here means memory moved between the reads, not a parsing error.
  nvidia-smi --query-gpu=memory.total,memory.reserved,memory.used,memory.free --format=csv,noheader,nounits >"$d/query-gpu-after.csv"
  stop "$hp"
  cat "$d/status.txt"
  python3 "$here/compare_status.py" --xml "$d/nvidia-smi-q.xml" --query-gpu "$d/query-gpu.csv" \
    --apps "$d/query-compute-apps.csv" --ours "nvml=$d/status-nvml.json" --ours "smi=$d/status-smi.json" \
    --holder "$d/holder.json" --out "$d/compare.json"
}

# (b) issue 2 §6 on the real driver: NVML sample vs spawning nvidia-smi -q -x.
step_bench() {
  local d=$W/bench hp rc
  python3 "$here/hold_memory.py" --mib 512 --ready "$d/holder.json" --seconds 120 &
  hp=$!
  wait_for "$d/holder.json" "$hp" 90 || log "holder did not start; benchmarking without a process"
  node "$root/.device/status-bench.mjs" --out "$d/status-bench.json" | tee "$d/status-bench.txt"
  rc=${PIPESTATUS[0]}
  stop "$hp"
  return "$rc"
}

# (c) issue 4: a real recording of a trainer whose DataLoader workers touched CUDA, and doctor on it.
step_record() {
  local d=$W/record tp rp gpu driver
  python3 "$here/trainer_with_workers.py" --seconds 50 --workers 2 --ready "$d/trainer.json" >"$d/trainer.log" 2>&1 &
  tp=$!
  wait_for "$d/trainer.json" "$tp" 120 || { log "trainer did not get going"; cat "$d/trainer.log"; stop "$tp"; return 1; }
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
  driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)
  gpumem record --out "$d/doctor-recording.ndjson" --interval 500 --duration 20 \
    --note "Recorded on a real $gpu (driver $driver) by bench/gpu/run-all.sh: bench/gpu/trainer_with_workers.py, a small CNN trainer whose 2 DataLoader workers touched CUDA (each holds its own context); PYTORCH_CUDA_ALLOC_CONF unset" \
    >"$d/record.log" 2>&1 &
  rp=$!
  sleep 3
  gpumem doctor --window 5 --no-color >"$d/doctor-live.txt" 2>&1
  gpumem doctor --window 5 --json >"$d/doctor-live.json" 2>"$d/doctor-live.stderr.txt"
  wait "$rp"
  log "record exited $?"
  stop "$tp"
  gpumem doctor --replay "$d/doctor-recording.ndjson" --no-color >"$d/doctor-replay.txt" 2>&1
  gpumem doctor --replay "$d/doctor-recording.ndjson" --json >"$d/doctor-replay.json" 2>/dev/null
  cat "$d/doctor-replay.txt"
  # The recording may replace the synthetic example only if it shows what it was made to show.
  python3 - "$d/doctor-replay.json" "$d/trainer.json" >"$d/verdict.json" <<'EOF'
import json, sys
doc, trainer = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
ids = [f["id"] for f in doc.get("findings", [])]
workers = set(trainer.get("workerPids", []))
flagged = {p for f in doc.get("findings", []) if f["id"] == "worker-cuda" for p in f["evidence"].get("pids", [])}
intended = ["worker-cuda", "alloc-conf"]
ok = all(i in ids for i in intended) and bool(workers) and workers <= flagged
print(json.dumps({"intendedFindings": intended, "findings": ids, "workerPids": sorted(workers),
                  "workerPidsFlagged": sorted(flagged), "showsIntendedFindings": ok}, indent=2))
EOF
  cat "$d/verdict.json"
  python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["showsIntendedFindings"] else 1)' "$d/verdict.json"
}

# (d) issue 5: a real train → eval pipeline under gpumem pipeline.
step_pipeline() {
  local d=$W/pipeline rc
  gpumem pipeline "$here/pipeline.yaml" --json --db "$W/history.db" >"$d/pipeline.json" 2>"$d/pipeline.stderr.txt"
  rc=$?
  log "pipeline exited $rc"
  gpumem runs --db "$W/history.db" --no-color >"$d/runs.txt" 2>&1
  # The human report of each stage's run, from the history.
  local id
  for id in $(python3 -c 'import json,sys; print(" ".join(str(s["runId"]) for s in json.load(open(sys.argv[1]))["stages"] if s.get("runId")))' "$d/pipeline.json" 2>/dev/null); do
    gpumem runs show "$id" --db "$W/history.db" --no-color >>"$d/report.txt" 2>&1
    echo >>"$d/report.txt"
  done
  cat "$d/pipeline.stderr.txt" "$d/runs.txt"
  return "$rc"
}

# (e) issue 6: companion overhead and statistics vs memory_stats; a real OOM under gpumem run.
step_companion() {
  local d=$W/companion rc1 rc2 folder
  python3 "$here/companion-overhead.py" --steps 3000 --out "$d/companion-overhead.json" | tee "$d/companion-overhead.txt"
  rc1=${PIPESTATUS[0]}
  gpumem run --gpus 0 --snapshot-on-oom --memory-fraction 0.05 --db "$W/history.db" --json \
    -- python3 "$here/oom_model.py" >"$d/oom-run.json" 2>"$d/oom-run.stderr.txt"
  rc2=$?
  log "oom run exited $rc2 (1 expected: the child dies of its OOM)"
  tail -n 40 "$d/oom-run.stderr.txt"
  folder=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("runFolder") or "")' "$d/oom-run.json" 2>/dev/null)
  if [[ -n $folder && -d $folder ]]; then
    mv "$folder" "$d/run-folder"   # the run folder holds the snapshot; one copy in the results is enough
    local snap
    for snap in "$d"/run-folder/*.pickle; do
      [[ -f $snap ]] || continue
      gpumem snapshot "$snap" --json >"${snap%.pickle}.gpumem.json"
      gpumem snapshot "$snap" --no-color >"${snap%.pickle}.gpumem.txt"
      python3 "$here/snapshot_stats.py" "$snap" --out "${snap%.pickle}.torch-stats.json" &&
        python3 "$here/snapshot_stats.py" --compare "${snap%.pickle}.torch-stats.json" "${snap%.pickle}.gpumem.json" --out "${snap%.pickle}.compare.json"
    done
  else
    log "no run folder in the report"
  fi
  python3 - "$d/oom-run.json" >"$d/verdict.json" <<'EOF2'
import glob, json, os, sys
j = json.load(open(sys.argv[1]))
attempts = j.get("attempts") or []
ooms = [o for a in attempts for o in (a.get("ooms") or [])]
comp = [((a.get("plugins") or {}).get("companion") or {}) for a in attempts]
allocator = [o for o in ooms if '"allocator": {' in json.dumps(o)]  # the companion's numbers joined to the printed OOM
snaps = sorted(glob.glob(os.path.join(os.path.dirname(sys.argv[1]), "run-folder", "*.pickle")))
print(json.dumps({"exit": j.get("exit"), "runFolder": j.get("runFolder"), "printedOoms": len(ooms),
                  "oomsWithAllocatorNumbers": len(allocator), "companionSplit": [c.get("gpus") for c in comp],
                  "snapshotsReported": [s for c in comp for s in (c.get("snapshots") or [])],
                  "snapshotsCopied": [os.path.basename(s) for s in snaps],
                  "ok": bool(ooms) and bool(allocator) and bool(snaps)}, indent=2))
EOF2
  cat "$d/verdict.json"
  [[ $rc1 == 0 ]] && python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["ok"] else 1)' "$d/verdict.json"
}

# (f) issue 8: real snapshots (one at an OOM) against torch's own numbers, and gpumem snapshot on them.
step_snapshot() {
  local d=$W/snapshot f ok=0
  python3 "$here/snapshot_oom.py" --out-dir "$d" || return 1
  for f in before oom; do
    python3 "$here/snapshot_stats.py" "$d/$f.pickle" --out "$d/$f.torch-stats.json" || ok=1
    gpumem snapshot "$d/$f.pickle" --json >"$d/$f.gpumem.json" || ok=1
    gpumem snapshot "$d/$f.pickle" --no-color >"$d/$f.gpumem.txt"
    python3 "$here/snapshot_stats.py" --compare "$d/$f.torch-stats.json" "$d/$f.gpumem.json" --out "$d/$f.compare.json" || ok=1
  done
  gpumem snapshot "$d/oom.pickle" --html "$d/oom.html" --request 600MiB --no-color >/dev/null || ok=1
  gpumem snapshot diff "$d/before.pickle" "$d/oom.pickle" --json >"$d/diff.json" || ok=1
  cat "$d/oom.gpumem.txt"
  ls -la "$d"
  return "$ok"
}

# (g) issue 7: a real fit run, checked; then the estimate-accuracy benchmark.
step_fit() {
  python3 "$here/fit_check.py" --gpumem "node $root/.device/gpumem.mjs" --out "$W/fit/fit.json"
}

# Resumable: every finished config (and fit phase) goes at once into build/gpu-accuracy/ (git-ignored, so it
# stays on the GPU machine between calls), and a later call skips what is there; calling `run-all.sh accuracy`
# again continues where the last call stopped (exit 75 = stopped at the time budget, shown as "partial").
# ACCURACY_QUICK=1: the first 4 configs, no fit. ACCURACY_ARGS: more options, e.g. "--configs A,B",
# "--skip-fit", "--only-fit", "--retry-failed" (bench/gpu/estimate-accuracy.py --help).
step_accuracy() {
  local d=$W/accuracy state=$root/build/gpu-accuracy rc extra=()
  read -ra extra <<<"${ACCURACY_ARGS:-}"
  # node is the one on PATH (run-all unpacked .device/node.gz there when the machine has none).
  python3 "$here/estimate-accuracy.py" --gpumem "node $(printf %q "$root/.device/gpumem.mjs")" \
    --budget-s "$((${STEP_LIMIT_S:-570} - 10))" "${extra[@]}" | tee "$d/estimate-accuracy.txt"
  rc=${PIPESTATUS[0]}
  # Everything recorded so far (this call's and earlier calls'), so each call's results are complete.
  [[ -d $state ]] && cp -r "$state/." "$d/"
  return "$rc"
}

# ---------------------------------------------------------------- one step in its own process (re-entry)
if [[ ${1:-} == --step ]]; then
  "step_$2"
  exit $?
fi

# ---------------------------------------------------------------- main
: "${OUT:?OUT must name the folder whose files come back}"
budget=${GPU_CHECK_BUDGET_S:-570}
args=${*:-all}
case ${1:-all} in
  part1) label=part1; steps=(env truth bench record pipeline companion snapshot) ;;
  part2) label=part2; steps=(env fit accuracy) ;;
  all) label=all; steps=(env truth bench record pipeline companion snapshot fit accuracy) ;;
  *) label=steps; steps=(env "$@") ;;
esac
declare -A limit=([env]=60 [truth]=150 [bench]=120 [record]=180 [pipeline]=240 [companion]=240 [snapshot]=150 [fit]=420 [accuracy]=570)

W=$(mktemp -d)/gpu-check-$label
mkdir -p "$W" "$OUT"
export W PYTHONUNBUFFERED=1
export XDG_DATA_HOME=$W/xdg   # run history and run folders of gpumem run/pipeline stay inside the results
exec > >(tee -a "$W/run-all.log") 2>&1

if ! command -v node >/dev/null; then
  [[ -s .device/node.gz ]] || { echo "no node on PATH and no .device/node.gz: run scripts/stage-device.sh and carry .device" >&2; exit 2; }
  nb=$(mktemp -d) && gunzip -c .device/node.gz >"$nb/node" && chmod +x "$nb/node" && export PATH=$nb:$PATH
fi
[[ -f .device/gpumem.mjs ]] || { echo "no .device/gpumem.mjs: run scripts/stage-device.sh and carry .device" >&2; exit 2; }
log "gpu checks ($label): ${steps[*]}; node $(node --version); budget ${budget}s; results in $W"

started=$SECONDS
n=0
for s in "${steps[@]}"; do
  n=$((n + 1))
  sf=$W/status-$(printf %02d "$n")-$s
  declare -F "step_$s" >/dev/null || { log "unknown step $s"; echo "unknown 0 0" >"$sf"; continue; }
  mkdir -p "$W/$s"
  left=$((budget - (SECONDS - started) - 25))   # 25 s kept for packing the results
  t=${limit[$s]:-300}
  ((t > left)) && t=$left
  if ((t < 20)); then
    log "== $s: skipped, budget spent"
    echo "skipped 0 0" >"$sf"
    continue
  fi
  log "== $s (limit ${t}s)"
  t0=$SECONDS
  STEP_LIMIT_S=$t timeout -k 15 "$t" bash "$here/run-all.sh" --step "$s" >"$W/$s/step.log" 2>&1
  rc=$?
  took=$((SECONDS - t0))
  case $rc in
    0) st=ok ;;
    124 | 137) st=timeout ;;
    75) st=partial ;;   # stopped itself at its time budget, results so far kept; run the step again to go on
    *) st=failed ;;
  esac
  echo "$st $rc $took" >"$sf"
  tail -n 25 "$W/$s/step.log"
  log "== $s: $st (exit $rc, ${took}s)"
done

# (h) summary: date, GPU, driver, CUDA, torch, and each step's status.
python3 - "$W" "$label" "$root" "$args" >"$W/summary.json" <<'EOF'
import glob, json, os, subprocess, sys, time
w, label, root, args = sys.argv[1:5]
def run(*cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout.strip()
    except Exception:
        return None
q = (run("nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader") or "").splitlines()
head = (run("nvidia-smi") or "").splitlines()
cuda = next((l.split("CUDA Version:")[1].split()[0] for l in head if "CUDA Version:" in l), None)
try:
    versions = json.load(open(os.path.join(w, "env", "versions.json")))
except Exception:
    versions = {}
commit = open(os.path.join(root, ".device", "commit.txt")).read().strip() if os.path.exists(os.path.join(root, ".device", "commit.txt")) else None
steps = {}
for f in sorted(glob.glob(os.path.join(w, "status-*"))):
    st, rc, took = open(f).read().split()
    steps[os.path.basename(f)[10:]] = {"status": st, "exitCode": int(rc), "seconds": int(took)}
print(json.dumps({
    "schemaVersion": 1, "kind": "gpumem.gpu-check.summary", "label": label,
    "date": time.strftime("%Y-%m-%d"), "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    "gpus": [dict(zip(("name", "driver", "memoryTotal"), [x.strip() for x in l.split(",")])) for l in q],
    "gpu": q[0].split(",")[0].strip() if q else None, "driver": q[0].split(",")[1].strip() if q else None,
    "cudaDriver": cuda, "torch": versions.get("torch"), "torchCuda": versions.get("torchCuda"), "python": versions.get("python"),
    "node": run("node", "--version"), "gpumemCommit": commit,
    "command": f"bash bench/gpu/run-all.sh {args}", "steps": steps}, indent=2))
EOF
cat "$W/summary.json"

# Pack: at most 8 files come back, 16 MiB each. Oversized files (large snapshots) are left out and listed.
tarball=$OUT/gpu-check-$label.tar.gz
tar -C "$(dirname "$W")" -czf "$tarball" "$(basename "$W")"
if (($(stat -c %s "$tarball") > 15 * 1024 * 1024)); then
  find "$W" -type f -size +3M -printf '%P\t%s\n' >"$W/left-out.tsv"
  log "tarball over 15 MiB; leaving out: $(cut -f1 "$W/left-out.tsv" | tr '\n' ' ')"
  tar -C "$(dirname "$W")" -czf "$tarball" --exclude-from=<(cut -f1 "$W/left-out.tsv" | sed "s|^|$(basename "$W")/|") "$(basename "$W")"
fi
cp "$W/summary.json" "$OUT/summary-$label.json"
cp "$W/run-all.log" "$OUT/run-all-$label.log"
log "results: $(find "$OUT" -maxdepth 1 -type f -printf '%f (%s bytes) ' )"
