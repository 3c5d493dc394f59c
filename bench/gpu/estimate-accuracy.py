#!/usr/bin/env python3
"""Accuracy of `gpumem estimate` (and cost of `gpumem fit`) on a real NVIDIA GPU (issue 7, docs/gpu-checks.md).

For each config in bench/gpu/accuracy_model.py it trains 3 steps with random weights (seed 0) in a fresh
process (so allocator state never carries over: peaks are reset after CUDA init, everything is freed at exit,
and the next config waits until the GPU's used memory is back to where it started; each has a time limit) and
measures the peak (NVML process memory, and torch.cuda.max_memory_reserved + the context measured after CUDA
init), asks `gpumem estimate --json` for the same setup, and prints the error beside two peers: accelerate's
rule (4 × the weights in their dtype: 16 B/param fp32, 8 B/param 16-bit; "Training using Adam") and
DeepSpeed's ZeRO-2 model-states formula on one GPU (4P + 16P/N = 20P). ResNet-50 has no transformer config,
so its activation bytes per sample are measured from two batches, as `gpumem fit` would, and given with
--activation-bytes-per-sample. Then `gpumem fit` on GPT-2 small: runs used, the batch found, 200 steps at it,
and the true maximum (doubling, then bisection to 1 %).

Resumable: every finished config (and fit phase) is appended as one JSON line to the results file at once, and
a new call skips what is already there, so the run can be split over several calls of at most ~600 s. A
summary of everything recorded so far is written at the end of every call.

    python3 estimate-accuracy.py [--configs A,B | --only-fit | --skip-fit] [--quick] [--budget-s S]
                                 [--results FILE.jsonl] [--fresh] [--retry-failed] [--dry-run]

ACCURACY_QUICK=1 (or --quick) selects the first 4 configs and no fit. --dry-run needs no GPU and no torch: it
lists the configs, runs the estimate side for real (`node dist/cli/bin.js` when .device/ is not staged) and
prints the fit commands. Exit: 0 all selected work recorded and ok; 1 recorded with failures; 75 stopped at
the time budget (call again to continue); 2 bad arguments.
"""
import argparse
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import accuracy_model as am  # noqa: E402  (no torch at import)
import accuracy_fit  # noqa: E402

GiB = 2 ** 30
CHILD = [sys.executable, os.path.join(HERE, "accuracy_model.py")]
DRY_RUN_ACTIVATION = 96 * am.MiB   # a placeholder for ResNet's measured bytes per sample when nothing is measured
MARGIN_PCT = 8                      # gpumem estimate's default --margin: under-estimates beyond it are counted


class Budget:
    """Wall-clock budget of this call: work starts only when it can finish, and is capped at what is left."""

    def __init__(self, seconds):
        self.deadline = None if seconds is None else time.time() + seconds - 20   # 20 s kept for the summary

    def left(self):
        return float("inf") if self.deadline is None else self.deadline - time.time()

    def timeout(self, own_limit):
        """(timeout to use, whether the budget rather than the work's own limit set it)."""
        left = self.left()
        return (own_limit, False) if left >= own_limit else (max(1.0, left), True)


def run_child(argv, timeout):
    """Runs argv; returns (exit code or None on timeout, stdout, stderr, seconds). It stays in our process group,
    so a timeout of the whole step (run-all.sh) ends it too; on its own timeout it is killed here."""
    t0 = time.time()
    try:
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    except OSError as e:   # e.g. no node on PATH: a failed row, not a crashed benchmark
        return 127, "", f"cannot start {argv[0]}: {e}", 0.0
    try:
        out, err = p.communicate(timeout=timeout)
        return p.returncode, out, err, round(time.time() - t0, 1)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        return None, out, err, round(time.time() - t0, 1)


def settle(baseline):
    """Waits (≤ 15 s) until the GPU's used memory is back to what it was at start, so the next config's
    before-init reading (the device-delta method) does not include the last one's teardown."""
    for _ in range(30):
        now = am.gpu_used()
        if all(now.get(u) is None or b is None or now[u] <= b + 16 * am.MiB for u, b in baseline.items()):
            return
        time.sleep(0.5)


def settle_after(m, baseline):
    """Settles only after a reading by device delta: that is the one method another process's memory disturbs
    (the last config's teardown, or the other lanes of run-all.sh); readings per pid need no quiet GPU."""
    if '"method": "device-delta"' in json.dumps(m):
        settle(baseline)


def measure(name, batch, timeout, history=None):
    """One fresh training process; its measurement dict, or a failed one with the reason. ``history``: where the
    child dumps the allocator's memory history of its steps (two steps then, enough for the peak of step 2)."""
    extra = ["--steps", "3"] if history is None else ["--steps", "2", "--memory-history", history]
    rc, out, err, secs = run_child(CHILD + ["--measure", name, "--batch", str(batch)] + extra, timeout)
    line = next((ln for ln in reversed(out.splitlines()) if ln.startswith(am.RESULT_MARK)), None)
    try:
        m = json.loads(line[len(am.RESULT_MARK):]) if line else None
    except ValueError:
        m = None
    if m is not None:
        pass
    elif rc is None:
        m = {"status": "timeout", "reason": f"no result within {timeout:.0f} s"}
    else:
        m = {"status": "error", "reason": f"exit {rc} without a result: {err.strip()[-600:]}"}
    m["wallSeconds"] = secs
    return m


def estimate(gpumem, cfg, act_bytes, files, gpu_arg):
    """`gpumem estimate --json` for the config: its peak, the model's parameter counts, the argv and any error."""
    argv = shlex.split(gpumem) + ["estimate", "--json", "--precision", cfg["precision"], "--optimizer", cfg["optimizer"],
                                  "--batch", str(cfg["batch"])]
    if cfg["family"] == "resnet50":
        argv += [files["resnet50"], "--activation-bytes-per-sample", str(act_bytes)]
    else:
        argv += [files[cfg["family"]], "--seq", str(cfg["seq"])]
    if cfg["freeze"]:
        argv += ["--freeze", ",".join(cfg["freeze"])]
    result = {}
    for gpu in ([gpu_arg, am.catalogue_gpu()] if gpu_arg == "auto" else [gpu_arg]):
        full = argv + (["--gpu", gpu] if gpu else [])
        rc, out, err, _ = run_child(full, 60)
        result = {"argv": full, "exitCode": rc}
        if rc in (0, 1):   # 1: the batch does not fit the --gpu budget; the estimate is still there
            try:
                j = json.loads(out)
                return dict(result, bytes=j["peak"]["totalBytes"], phase=j["peak"]["phase"], breakdown=j["peak"]["breakdown"],
                            # totalParams counts buffers (BatchNorm statistics) too; torch's parameters() does not
                            params=j["model"]["totalParams"] - (j["model"].get("bufferParams") or 0),
                            trainableParams=j["model"]["trainableParams"],
                            contextBytes=j["environment"]["contextBytes"])
            except (ValueError, KeyError, TypeError) as e:
                result["error"] = f"unreadable --json output ({e}): {out[:300]}"
        else:
            result["error"] = f"exit {rc}: {err.strip()[-600:]}"
        if rc != 3:   # 3: --gpu auto found no GPU through the CLI's sources; then the catalogue name is tried
            break
    return result


def peers(params, precision):
    if not params:
        return {"accelerateBytes": None, "deepspeedModelStatesBytes": None}
    return {"accelerateBytes": params * (16 if precision == "fp32" else 8), "deepspeedModelStatesBytes": params * 20}


def pct(est, truth):
    return round((est - truth) / truth * 100, 2) if est is not None and truth else None


def record_history(cfg, a, budget, baseline, folder):
    """A second run of the config with the allocator's memory history recorded: the events CUDA's allocator saw,
    to replay through gpumem's simulator and to compare with the traced step's, where the estimate's reserved
    figure misses. Its own peaks are recorded too (recording history keeps host memory only)."""
    if a.dry_run:
        return {"status": "not run", "reason": "dry run: nothing measured"}
    timeout, capped = budget.timeout(a.config_timeout)
    if capped and timeout < 60:
        return {"status": "not run", "reason": "the budget left too little time"}
    os.makedirs(folder, exist_ok=True)
    path = os.path.abspath(os.path.join(folder, f"{cfg['name']}.pickle"))
    m = measure(cfg["name"], cfg["batch"], timeout, history=path)
    settle_after(m, baseline)
    keep = {k: m.get(k) for k in ("status", "reason", "maxAllocatedBytes", "maxReservedBytes", "memoryHistory", "wallSeconds")}
    keep["file"] = f"history/{cfg['name']}.pickle" if os.path.exists(path) else None
    return keep


def run_config(cfg, a, files, budget, baseline):
    """Measures (unless dry-run) and estimates one config; None when the budget cut the measurement short."""
    row = {"kind": "config", "config": cfg["name"], "setup": cfg, "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
           "reasons": []}
    act, m = None, None
    if a.dry_run:
        row["measured"] = None
        row["reasons"].append("dry run: nothing measured")
        if cfg["family"] == "resnet50":
            act, row["activationSource"] = DRY_RUN_ACTIVATION, "dry-run placeholder"
    else:
        timeout, capped = budget.timeout(a.config_timeout)
        m = measure(cfg["name"], cfg["batch"], timeout)
        settle_after(m, baseline)
        if m["status"] == "timeout" and capped:
            return None
        row["measured"] = m
        if m["status"] != "ok":
            row["reasons"].append(f"measurement {m['status']}: {m.get('reason')}")
        if cfg["family"] == "resnet50":   # bytes per sample from a second run at half the batch, as fit measures them
            half = cfg["batch"] // 2
            timeout, capped = budget.timeout(a.config_timeout)
            m1 = measure(cfg["name"], half, timeout)
            settle_after(m1, baseline)
            if m1["status"] == "timeout" and capped:
                return None
            row["measuredHalfBatch"] = m1
            if m["status"] == "ok" and m1["status"] == "ok":
                act = (m["maxReservedBytes"] - m1["maxReservedBytes"]) // (cfg["batch"] - half)
                row["activationSource"] = f"max_memory_reserved at batch {cfg['batch']} minus at {half}, per sample"
            else:
                row["reasons"].append(f"no bytes per sample: half-batch measurement {m1['status']}: {m1.get('reason')}")
    if cfg["name"] in a.history_configs:
        row["memoryHistory"] = record_history(cfg, a, budget, baseline, os.path.join(os.path.dirname(files["resnet50"]), "..", "history"))
    row["activationBytesPerSample"] = act
    if cfg["family"] == "resnet50" and act is None:
        est = {"error": "not run: ResNet-50 needs the measured bytes per sample"}
    else:
        est = estimate(a.gpumem, cfg, act, files, a.estimate_gpu)
    row["estimate"] = est
    if est.get("error"):
        row["reasons"].append(f"estimate: {est['error']}")
    # A run that failed (an OOM half-way) has no peak to compare with: its readings stay under "measured" only.
    good = m if m and m.get("status") == "ok" else {}
    truth = good.get("nvmlPeakBytes")
    if good and truth is None:
        row["reasons"].append("no NVML process memory by any method (nvidia-smi)")
    row.update(estimateBytes=est.get("bytes"), truthBytes=truth, truthMethod=good.get("nvmlMethod"),
               errorPct=pct(est.get("bytes"), truth),
               errorVsReservedPlusContextPct=pct(est.get("bytes"), good.get("reservedPlusContextBytes")),
               **peers(est.get("params"), cfg["precision"]))
    if m and m.get("totalParams") is not None and est.get("params") is not None:
        row["paramsMatch"] = m["totalParams"] == est["params"] and m["trainableParams"] == est["trainableParams"]
        if not row["paramsMatch"]:
            row["reasons"].append(f"parameter counts differ: torch {m['totalParams']}/{m['trainableParams']} trainable, "
                                  f"estimate {est['params']}/{est['trainableParams']}")
    row["status"] = "dry-run" if a.dry_run else ("ok" if row["errorPct"] is not None else "failed")
    return row


def gib(x, width=8):
    return f"{x / GiB:{width}.2f}" if isinstance(x, (int, float)) else f"{'n/a':>{width}}"


def print_row(row, note=None):
    err = row.get("errorPct")
    print(f"{row['config']:30} {row['status'] + (f' ({note})' if note else ''):7} measured {gib(row.get('truthBytes'))} GiB ({row.get('truthMethod') or '-'})"
          f"  gpumem {gib(row.get('estimateBytes'))} GiB  err {f'{err:+6.1f} %' if err is not None else '   n/a  '}"
          f"  accelerate {gib(row.get('accelerateBytes'), 7)}  deepspeed {gib(row.get('deepspeedModelStatesBytes'), 7)}",
          flush=True)
    if row["status"] == "dry-run":
        print(f"    {shlex.join(row['estimate'].get('argv') or [])}", flush=True)
    for reason in row.get("reasons", []):
        print(f"    {reason}", flush=True)


def load(path):
    """Records already in the results file (a torn last line, from a killed call, is skipped)."""
    records = []
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                try:
                    records.append(json.loads(line))
                except ValueError:
                    pass
    return records


def appender(path, records):
    def append(rec):
        records.append(rec)
        with open(path, "a") as f:
            f.write(json.dumps(rec) + "\n")
            f.flush()
            os.fsync(f.fileno())
    return append


def stats(values):
    vals = [abs(v) for v in values if v is not None]
    return {"n": len(vals), "medianAbsPct": round(statistics.median(vals), 2) if vals else None,
            "maxAbsPct": round(max(vals), 2) if vals else None}


def summarize(records, selected, meta, complete):
    latest = {}
    for r in records:
        if r["kind"] == "config":
            latest[r["config"]] = r   # a retried config's later line wins
    rows = [latest[c["name"]] for c in am.CONFIGS if c["name"] in latest]
    ok = [r for r in rows if r["status"] == "ok"]
    peer_err = {k: stats([pct(r[k], r["truthBytes"]) for r in ok]) for k in ("accelerateBytes", "deepspeedModelStatesBytes")}
    return {"schemaVersion": 1, "kind": "gpumem.gpu-check.estimate-accuracy", "meta": meta, "complete": complete,
            "configsSelected": [c["name"] for c in selected],
            "configsLeft": [c["name"] for c in selected if c["name"] not in latest],
            "configsFailed": [r["config"] for r in rows if r["status"] == "failed"],
            "configsNotRecorded": [c["name"] for c in am.CONFIGS if c["name"] not in latest],
            "vsNvmlProcessMemory": dict(stats([r["errorPct"] for r in ok]),
                                        underEstimatesBeyondMargin=[r["config"] for r in ok if r["errorPct"] < -MARGIN_PCT]),
            "vsReservedPlusContext": stats([r.get("errorVsReservedPlusContextPct") for r in ok]),
            "peersVsNvmlProcessMemory": peer_err, "goals": {"medianAbsPct": 3, "maxAbsPct": 8, "marginPct": MARGIN_PCT},
            "fit": accuracy_fit.summarize(records), "rows": rows}


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    staged = os.path.join(ROOT, ".device", "gpumem.mjs")
    ap.add_argument("--gpumem", help="how to run the CLI (default: the staged bundle .device/gpumem.mjs, else "
                                     "dist/cli/bin.js; with --dry-run dist/ first)")
    ap.add_argument("--configs", help="comma-separated config names (default: all, or the first 4 with --quick)")
    ap.add_argument("--quick", action="store_true", default=os.environ.get("ACCURACY_QUICK") == "1",
                    help="the first 4 configs and no fit (also ACCURACY_QUICK=1)")
    ap.add_argument("--only-fit", action="store_true")
    ap.add_argument("--skip-fit", action="store_true")
    ap.add_argument("--results", help="JSON-lines results file (default build/gpu-accuracy/estimate-accuracy-<gpu>-<driver>.jsonl)")
    ap.add_argument("--summary", help="summary JSON (default: the results file with .summary.json)")
    ap.add_argument("--fresh", action="store_true", help="start the results file over")
    ap.add_argument("--retry-failed", action="store_true", help="run configs again whose recorded row failed")
    ap.add_argument("--dry-run", action="store_true", help="no GPU, no torch: estimate side only")
    ap.add_argument("--budget-s", type=float, default=float(os.environ["STEP_LIMIT_S"]) if os.environ.get("STEP_LIMIT_S") else None,
                    help="wall-clock seconds for this call (default: $STEP_LIMIT_S, else unlimited)")
    ap.add_argument("--estimate-gpu", help="--gpu for gpumem estimate (default auto; H100-80GB in a dry run)")
    ap.add_argument("--history", default="bert-base-fp32-adamw-full,bert-base-amp-sgd-full",
                    help="configs measured a second time with the allocator's memory history recorded (\"\" for none): "
                         "the rows whose reserved peak the estimate misses")
    ap.add_argument("--config-timeout", type=float, default=240)
    ap.add_argument("--fit-timeout", type=float, default=420)
    ap.add_argument("--continue-steps", type=int, default=200)
    ap.add_argument("--continue-timeout", type=float, default=300)
    ap.add_argument("--trial-timeout", type=float, default=120)
    a = ap.parse_args()
    if a.only_fit and a.skip_fit:
        ap.error("--only-fit and --skip-fit exclude each other")
    names = [n.strip() for n in a.configs.split(",") if n.strip()] if a.configs else None
    unknown = [n for n in names or [] if n not in am.BY_NAME]
    if unknown:
        ap.error(f"unknown config(s) {', '.join(unknown)}; known: {', '.join(am.BY_NAME)}")
    a.history_configs = {n for n in (a.history or "").split(",") if n}
    unknown = sorted(a.history_configs - set(am.BY_NAME))
    if unknown:
        sys.exit(f"--history: unknown config {', '.join(unknown)}; known: {', '.join(am.BY_NAME)}")
    a.selected = [] if a.only_fit else [am.BY_NAME[n] for n in names] if names else am.CONFIGS[:4] if a.quick else am.CONFIGS
    a.do_fit = a.only_fit or not (a.skip_fit or a.quick or names)
    built = os.path.join(ROOT, "dist", "cli", "bin.js")
    order = [built, staged] if a.dry_run else [staged, built]
    a.gpumem = a.gpumem or f"node {shlex.quote(next((p for p in order if os.path.exists(p)), order[0]))}"
    a.estimate_gpu = a.estimate_gpu or ("H100-80GB" if a.dry_run else "auto")
    return a


def main():
    a = parse_args()
    meta = dict(am.gpu_identity(), date=time.strftime("%Y-%m-%d"), gpumem=a.gpumem, python=sys.version.split()[0])
    label = re.sub(r"[^A-Za-z0-9.-]+", "-", f"{meta['gpu']}-{meta['driver']}") if meta["gpu"] else "no-gpu"
    # Dry runs apart, so their rows never travel with a GPU machine's results (run-all.sh copies this folder).
    results = a.results or os.path.join(ROOT, "build", "gpu-accuracy-dry-run" if a.dry_run else "gpu-accuracy",
                                        f"estimate-accuracy-{'dry-run' if a.dry_run else label}.jsonl")
    summary_path = a.summary or re.sub(r"\.jsonl?$", "", results) + ".summary.json"
    os.makedirs(os.path.dirname(os.path.abspath(results)), exist_ok=True)
    if (a.fresh or a.dry_run) and os.path.exists(results):
        os.remove(results)
    records = load(results)
    append = appender(results, records)
    done = {r["config"] for r in records if r["kind"] == "config" and (r["status"] == "ok" or not a.retry_failed)}
    budget = Budget(None if a.dry_run else a.budget_s)
    print(f"estimate accuracy on {meta['gpu'] or 'no GPU'} (driver {meta['driver']}): {len(a.selected)} configs "
          f"({len([c for c in a.selected if c['name'] in done])} already recorded), fit {'yes' if a.do_fit else 'no'}; "
          f"budget {a.budget_s or 'unlimited'} s; results {results}", flush=True)
    # The inputs beside the results, so every recorded estimate argv can be run again from what comes back.
    tmp = os.path.join(os.path.dirname(os.path.abspath(results)), "inputs")
    os.makedirs(tmp, exist_ok=True)
    files = {}
    for family, spec in am.HF.items():
        files[family] = os.path.join(tmp, f"{family}.config.json")
        with open(files[family], "w") as f:
            json.dump(spec, f)
    files["resnet50"] = os.path.join(tmp, "resnet50.header.safetensors")
    am.write_resnet50_header(files["resnet50"])
    baseline = am.gpu_used()
    stopped = False
    for cfg in a.selected:
        if cfg["name"] in done:   # shown again, so the last call's output is the whole table
            print_row(next(r for r in reversed(records) if r["kind"] == "config" and r["config"] == cfg["name"]),
                      "recorded earlier")
            continue
        if budget.left() < 90:
            stopped = True
            break
        row = run_config(cfg, a, files, budget, baseline)
        if row is None:
            stopped = True
            break
        append(row)
        print_row(row)
    if a.do_fit and not stopped:
        stopped = not accuracy_fit.run_fit(a, records, budget, run_child, append)
    torch_version = next((r["measured"]["torch"] for r in records if r["kind"] == "config" and (r.get("measured") or {}).get("torch")), None)
    summary = summarize(records, a.selected, dict(meta, torch=torch_version), complete=not stopped)
    with open(summary_path, "w") as f:
        json.dump(summary, f, indent=2)
    v = summary["vsNvmlProcessMemory"]
    print(f"summary: {v['n']} configs measured; |error| median {v['medianAbsPct']} %, max {v['maxAbsPct']} % "
          f"(goals 3 % / 8 %); under-estimates beyond {MARGIN_PCT} %: {v['underEstimatesBeyondMargin'] or 'none'}; "
          f"failed: {summary['configsFailed'] or 'none'}; fit: {json.dumps(summary['fit'])}", flush=True)
    print(f"summary file {summary_path}", flush=True)
    if stopped:
        print(f"stopped at the time budget; left: {summary['configsLeft'] or 'the fit'}; call again to continue", flush=True)
        sys.exit(75)
    failed = [c["name"] for c in a.selected if c["name"] in summary["configsFailed"]] or (a.do_fit and not a.dry_run and not ((summary["fit"] or {}).get("continued") or {}).get("status") == "ok")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
