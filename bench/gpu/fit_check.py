"""A real `gpumem fit` run on bench/gpu/fit_model.py, checked (issue 7): runs used, the batch found, 200
steps at that batch without OOM, and the true maximum batch found here by doubling then bisection (each
trial a fresh process, 3 steps) to within 1 %.

    python3 bench/gpu/fit_check.py --gpumem "node .device/gpumem.mjs" --out fit.json [--continue-steps 200]
"""
import argparse
import json
import os
import shlex
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = [sys.executable, os.path.join(HERE, "fit_model.py")]


def trial(batch, steps):
    """One fresh training run; 'ok', 'oom', or 'error' (anything else went wrong)."""
    r = subprocess.run(MODEL + ["--batch", str(batch), "--steps", str(steps)], capture_output=True, text=True)
    if r.returncode == 0:
        return "ok", None
    tail = r.stderr[-600:]
    return ("oom" if "out of memory" in tail.lower() or "OutOfMemoryError" in tail else "error"), tail


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpumem", default="node .device/gpumem.mjs")
    ap.add_argument("--out", required=True)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--continue-steps", type=int, default=200)
    a = ap.parse_args()
    t0 = time.time()
    cmd = shlex.split(a.gpumem) + ["fit", "--json", "--gpus", "0", "--steps", str(a.steps), "--"] + MODEL + [
        "--batch", "{batch}", "--steps", "{steps}"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    result = {"schemaVersion": 1, "kind": "gpumem.gpu-check.fit", "command": cmd, "exitCode": r.returncode,
              "fitWallSeconds": round(time.time() - t0, 1)}
    try:
        result["fit"] = json.loads(r.stdout)
    except ValueError:
        result["fit"] = None
        result["fitStderr"] = r.stderr[-2000:]
    found = (result["fit"] or {}).get("batch")
    result["runsUsed"] = len((result["fit"] or {}).get("runs", []))
    trials = []
    if found:
        status, tail = trial(found, a.continue_steps)
        result["continued"] = {"batch": found, "steps": a.continue_steps, "status": status, "stderrTail": tail}
        # True maximum: double from the found batch until it fails, then bisect to 1 %.
        lo, hi = (found, None) if status == "ok" else (0, found)
        while hi is None and len(trials) < 8:
            b = lo * 2
            s, _ = trial(b, 3)
            trials.append({"batch": b, "status": s})
            lo, hi = (b, None) if s == "ok" else (lo, b)
        while hi is not None and hi - lo > max(1, lo // 100) and len(trials) < 20:
            mid = (lo + hi) // 2
            s, _ = trial(mid, 3)
            trials.append({"batch": mid, "status": s})
            lo, hi = (mid, hi) if s == "ok" else (lo, mid)
        result["trueMaxBatch"] = lo
        result["trueMaxResolution"] = None if hi is None else hi - lo
        result["foundOverTrueMax"] = found / lo if lo else None
    result["trials"] = trials
    result["wallSeconds"] = round(time.time() - t0, 1)
    with open(a.out, "w") as handle:
        json.dump(result, handle, indent=2)
    print(f"fit: exit {r.returncode}, {result['runsUsed']} runs, batch {found}; "
          f"{a.continue_steps} steps: {result.get('continued', {}).get('status')}; true max {result.get('trueMaxBatch')} "
          f"({len(trials)} trials); {result['wallSeconds']} s", flush=True)
    sys.exit(0 if found and result["continued"]["status"] == "ok" else 1)


if __name__ == "__main__":
    main()
