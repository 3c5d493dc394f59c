# The checks of bench/gpu/run-all.sh, one function each; sourced by it. Each step writes into $W/<step>/ and,
# as its last act, one line to $W/<step>/headline.txt that the summary table shows. With DRY=1 (run-all.sh
# --dry-run, a machine without a GPU) each step runs the same gpumem commands and checking scripts on the fake
# NVML driver, the fake nvidia-smi, the fake torch and this project's committed real snapshots, and says what
# it left out: only the parts that need CUDA itself are missing.

headline() { printf '%s\n' "$*" >"$W/${STEP:?}/headline.txt"; }

# json_get FILE EXPR: a value from a JSON file (python expression over `d`), or "?" when it cannot be read.
json_get() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2" 2>/dev/null || echo "?"; }

step_env() {
  local d=$W/env
  nvidia-smi -L >"$d/nvidia-smi-L.txt" 2>&1
  nvidia-smi >"$d/nvidia-smi.txt" 2>&1
  nvidia-smi --query-gpu=index,uuid,name,pci.bus_id,driver_version,memory.total,memory.reserved,compute_mode --format=csv >"$d/query-gpu.csv" 2>&1
  "$PY" "$here/env_versions.py" >"$d/versions.json"
  node --version >"$d/node-version.txt"
  gpumem --version >"$d/gpumem-version.txt" || return 1
  cat "$d/versions.json"
  headline "node $(cat "$d/node-version.txt"), gpumem $(cat "$d/gpumem-version.txt"), torch $(json_get "$d/versions.json" 'd.get("torch")')"
}

# nvidia-smi and gpumem status in the same moment while PyTorch holds 1 GiB; needs a quiet GPU.
step_truth() {
  local d=$W/truth hp
  if ((DRY)); then
    gpumem status --json --source nvml >"$d/status-nvml.json" || return 1
    gpumem status --json --source smi >"$d/status-smi.json" || return 1
    gpumem status --no-color >"$d/status.txt" || return 1
    headline "dry run: status via the fake NVML driver ($(json_get "$d/status-nvml.json" 'len(d["devices"])') GPU) and the fake nvidia-smi; the holder and the comparison need CUDA"
    return 0
  fi
  "$PY" "$here/hold_memory.py" --mib 1024 --ready "$d/holder.json" --seconds 120 &
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
  "$PY" "$here/compare_status.py" --xml "$d/nvidia-smi-q.xml" --query-gpu "$d/query-gpu.csv" \
    --apps "$d/query-compute-apps.csv" --ours "nvml=$d/status-nvml.json" --ours "smi=$d/status-smi.json" \
    --holder "$d/holder.json" --out "$d/compare.json"
  local rc=$?
  headline "status vs nvidia-smi: $( ((rc == 0)) && echo equal || echo DIFFERENT) (compare.json)"
  return "$rc"
}

# NVML sample vs spawning nvidia-smi -q -x on the real driver; needs a quiet GPU.
step_bench() {
  local d=$W/bench hp="" rc
  if ((DRY)); then
    node --import tsx "$root/bench/gpu/status-bench.ts" --nvml-samples 20 --smi-samples 3 --session-samples 3 --nvml-lib "$GPUMEM_NVML_LIB" \
      --smi "$root/test/fake-smi/nvidia-smi" --out "$d/status-bench.json" | tee "$d/status-bench.txt"
    rc=${PIPESTATUS[0]}
  else
    "$PY" "$here/hold_memory.py" --mib 512 --ready "$d/holder.json" --seconds 120 &
    hp=$!
    wait_for "$d/holder.json" "$hp" 90 || log "holder did not start; benchmarking without a process"
    node "$DEVICE/status-bench.mjs" --out "$d/status-bench.json" | tee "$d/status-bench.txt"
    rc=${PIPESTATUS[0]}
    stop "$hp"
  fi
  headline "NVML sample $(json_get "$d/status-bench.json" '"%.2f ms" % d["medianMs"]["nvmlWithProc"]'), nvmlInit $(json_get "$d/status-bench.json" '"%.1f ms CPU" % d["session"]["initCpuMs"]') (without attaching $(json_get "$d/status-bench.json" '"%.1f ms, first query %.1f ms, rc %s" % (d["sessionNoAttach"]["initCpuMs"], d["sessionNoAttach"]["firstQueryCpuMs"], d["sessionNoAttach"]["queryRc"])')), nvidia-smi / NVML $(json_get "$d/status-bench.json" '"%.1f×" % d["ratio"]["smiOverNvmlWithProc"]')$( ((DRY)) && echo ' (dry run: fake driver and a recorded XML)')"
  return "$rc"
}

# A real recording of a trainer whose DataLoader workers touched CUDA, and doctor on it.
step_record() {
  local d=$W/record tp rp gpu driver
  if ((DRY)); then
    gpumem record --out "$d/doctor-recording.ndjson" --interval 500 --duration 2 --note "dry run of bench/gpu/run-all.sh on the fake driver" >"$d/record.log" 2>&1 || return 1
    gpumem doctor --replay "$d/doctor-recording.ndjson" --no-color >"$d/doctor-replay.txt" 2>&1
    gpumem doctor --replay "$d/doctor-recording.ndjson" --json >"$d/doctor-replay.json" 2>/dev/null
    headline "dry run: recorded $(grep -c '' "$d/doctor-recording.ndjson") lines from the fake driver and replayed them through doctor; the trainer needs CUDA"
    [[ -s $d/doctor-replay.json ]]
    return
  fi
  "$PY" "$here/trainer_with_workers.py" --seconds 50 --workers 2 --ready "$d/trainer.json" >"$d/trainer.log" 2>&1 &
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
  "$PY" "$here/record_verdict.py" "$d/doctor-replay.json" "$d/trainer.json" >"$d/verdict.json"
  cat "$d/verdict.json"
  headline "doctor on the recording names the workers: $(json_get "$d/verdict.json" 'd["showsIntendedFindings"]')"
  python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["showsIntendedFindings"] else 1)' "$d/verdict.json"
}

# A real train → eval pipeline under gpumem pipeline (on request: not part of `all`).
step_pipeline() {
  local d=$W/pipeline rc id
  gpumem pipeline "$here/pipeline.yaml" --json --db "$W/history.db" >"$d/pipeline.json" 2>"$d/pipeline.stderr.txt"
  rc=$?
  gpumem runs --db "$W/history.db" --no-color >"$d/runs.txt" 2>&1
  for id in $(python3 -c 'import json,sys; print(" ".join(str(s["runId"]) for s in json.load(open(sys.argv[1]))["stages"] if s.get("runId")))' "$d/pipeline.json" 2>/dev/null); do
    gpumem runs show "$id" --db "$W/history.db" --no-color >>"$d/report.txt" 2>&1
    echo >>"$d/report.txt"
  done
  cat "$d/pipeline.stderr.txt" "$d/runs.txt"
  headline "pipeline exited $rc"
  return "$rc"
}

# The companion's step-time overhead and stream vs memory_stats; a real OOM under gpumem run.
step_companion() {
  local d=$W/companion rc1 rc2=0 folder snap fake=()
  ((DRY)) && fake=(--fake-torch --steps 300)
  "$PY" "$here/companion-overhead.py" "${fake[@]}" --site "$DEVICE/python/_site" --out "$d/companion-overhead.json" | tee "$d/companion-overhead.txt"
  rc1=${PIPESTATUS[0]}
  local overhead
  overhead="overhead at 10 Hz $(json_get "$d/companion-overhead.json" '"%.2f %%" % d["10Hz"]["overheadPct"]'), stats messages $(json_get "$d/companion-overhead.json" 'd["10Hz"]["statsMessages"]'), stream = memory_stats: $(json_get "$d/companion-overhead.json" 'd["10Hz"]["streamMatches"]')"
  if ((DRY)); then
    headline "dry run (fake torch): $overhead; the OOM run needs CUDA"
    return "$rc1"
  fi
  gpumem run --gpus 0 --snapshot-on-oom --memory-fraction 0.05 --db "$W/history.db" --json \
    -- "$PY" "$here/oom_model.py" >"$d/oom-run.json" 2>"$d/oom-run.stderr.txt"
  log "oom run exited $? (1 expected: the child dies of its OOM)"
  tail -n 40 "$d/oom-run.stderr.txt"
  folder=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("runFolder") or "")' "$d/oom-run.json" 2>/dev/null)
  if [[ -n $folder && -d $folder ]]; then
    mv "$folder" "$d/run-folder"   # the run folder holds the snapshot; one copy in the results is enough
    for snap in "$d"/run-folder/*.pickle; do
      [[ -f $snap ]] && check_snapshot "${snap%.pickle}"
    done
  else
    log "no run folder in the report"
  fi
  "$PY" "$here/companion_verdict.py" "$d/oom-run.json" >"$d/verdict.json"
  cat "$d/verdict.json"
  python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["ok"] else 1)' "$d/verdict.json" || rc2=1
  headline "$overhead; OOM caught with a snapshot: $(json_get "$d/verdict.json" 'd["ok"]')"
  ((rc1 == 0 && rc2 == 0))
}

# check_snapshot BASE: gpumem snapshot on BASE.pickle against torch's own statistics of it.
check_snapshot() {
  local base=$1
  "$PY" "$here/snapshot_stats.py" "$base.pickle" --out "$base.torch-stats.json" || return 1
  gpumem snapshot "$base.pickle" --json >"$base.gpumem.json" || return 1
  gpumem snapshot "$base.pickle" --no-color >"$base.gpumem.txt"
  "$PY" "$here/snapshot_stats.py" --compare "$base.torch-stats.json" "$base.gpumem.json" --out "$base.compare.json"
}

# Real snapshots (one at an OOM) against torch's own numbers, and gpumem snapshot on them. A dry run checks this
# project's committed H100 snapshots the same way.
step_snapshot() {
  local d=$W/snapshot f ok=0
  if ((DRY)); then
    cp "$root/bench/results/2026-11-27-h100-80gb/part1-companion-snapshot-record/snapshot/"{before,oom}.pickle "$d/" || return 1
  else
    "$PY" "$here/snapshot_oom.py" --out-dir "$d" || return 1
  fi
  for f in before oom; do check_snapshot "$d/$f" || ok=1; done
  gpumem snapshot "$d/oom.pickle" --html "$d/oom.html" --request 600MiB --no-color >/dev/null || ok=1
  gpumem snapshot diff "$d/before.pickle" "$d/oom.pickle" --json >"$d/diff.json" || ok=1
  cat "$d/oom.gpumem.txt"
  headline "gpumem snapshot = torch's statistics on before and oom: $( ((ok == 0)) && echo yes || echo NO)$( ((DRY)) && echo ' (dry run: the committed H100 snapshots)')"
  return "$ok"
}

# A real fit run, checked (on request: not part of `all`, it needs the GPU to itself).
step_fit() {
  "$PY" "$here/fit_check.py" --gpumem "node $DEVICE/gpumem.mjs" --out "$W/fit/fit.json"
}

# estimate vs measured peaks, one fresh process per config. Resumable across calls (build/gpu-accuracy/, see
# docs/gpu-checks.md); in a lane beside others it measures per process and waits for the GPU to settle only
# after a reading by device delta. ACCURACY_ARGS adds options (bench/gpu/estimate-accuracy.py --help).
step_accuracy() {
  local d=$W/accuracy state=$root/build/gpu-accuracy rc extra=() dry=()
  read -ra extra <<<"${ACCURACY_ARGS:-}"
  ((DRY)) && { dry=(--dry-run); state=$root/build/gpu-accuracy-dry-run; }
  "$PY" "$here/estimate-accuracy.py" "${dry[@]}" --gpumem "node $(printf %q "$GPUMEM_JS")" \
    --budget-s "$((${STEP_LIMIT_S:-470} - 10))" "${extra[@]}" | tee "$d/estimate-accuracy.txt"
  rc=${PIPESTATUS[0]}
  [[ -d $state ]] && cp -r "$state/." "$d/"
  headline "$(grep -E 'median|configs' "$d/estimate-accuracy.txt" | tail -1 | cut -c1-150)"
  return "$rc"
}
