"""The `gpumem fit` half of the estimate-accuracy benchmark (bench/gpu/estimate-accuracy.py): fit on GPT-2 small
(AMP bf16, AdamW, seq 1024), 200 steps at the batch it found, and the true maximum batch by doubling from the
found batch and then bisecting to 1 %, each trial a fresh 3-step process. Each phase and each trial is one
record in the results file, so a call that runs out of time resumes at the next trial."""
import json
import os
import shlex
import sys

import accuracy_model as am

TRAIN = [sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "accuracy_model.py"), "--train",
         am.FIT_CONFIG]
MAX_TRIALS = 16


def fit_argv(gpumem):
    return shlex.split(gpumem) + ["fit", "--json", "--gpus", "0", "--"] + TRAIN + ["--batch", "{batch}", "--steps", "{steps}"]


def trial_argv(batch, steps):
    return TRAIN + ["--batch", str(batch), "--steps", str(steps)]


def classify(rc, err):
    if rc == 0:
        return "ok"
    if rc is None:
        return "timeout"
    return "oom" if "out of memory" in err.lower() or "OutOfMemoryError" in err else "error"


def bounds(found, continued, trials):
    """(lo, hi) known so far: lo the largest batch that ran, hi the smallest that did not (None: none yet)."""
    lo, hi = (found, None) if continued == "ok" else (0, found)
    for t in trials:
        if t["status"] == "ok":
            lo = max(lo, t["batch"])
        else:
            hi = t["batch"] if hi is None else min(hi, t["batch"])
    return lo, hi


def next_trial(lo, hi, trials):
    """The next batch to try, or None when the maximum is known to 1 % (or the trials are spent / broke)."""
    if len(trials) >= MAX_TRIALS or any(t["status"] in ("error", "timeout") for t in trials):
        return None
    if hi is None:
        return lo * 2 if lo > 0 else None
    return (lo + hi) // 2 if hi - lo > max(1, lo // 100) else None


def run_fit(a, records, budget, run_child, append):
    """Runs the fit phases not yet in `records`; returns False when the budget stopped it."""
    fit = next((r for r in reversed(records) if r["kind"] == "fit"), None)
    if fit is not None and not fit.get("batch") and a.retry_failed:
        fit = None   # a fit that found nothing is run again on request; one that found a batch never is
    if a.dry_run:
        print("fit (dry run, not run):\n  " + shlex.join(fit_argv(a.gpumem)) + "\n  then " +
              shlex.join(trial_argv("BATCH", 200)) + "\n  then trials: " + shlex.join(trial_argv("B", 3)), flush=True)
        return True
    if fit is None:
        if budget.left() < 150:
            return False
        timeout, capped = budget.timeout(a.fit_timeout)
        rc, out, err, secs = run_child(fit_argv(a.gpumem), timeout)
        if rc is None and capped:
            return False
        try:
            report = json.loads(out)
        except ValueError:
            report = None
        fit = {"kind": "fit", "argv": fit_argv(a.gpumem), "exitCode": rc, "wallSeconds": secs, "report": report,
               "batch": (report or {}).get("batch"), "runsUsed": len((report or {}).get("runs") or []),
               "stderrTail": err[-1500:] if rc != 0 else None}
        append(fit)
        print(f"fit: exit {rc}, {fit['runsUsed']} runs, batch {fit['batch']}, {secs} s", flush=True)
    found = fit.get("batch")
    if not found:
        return True
    cont = next((r for r in records if r["kind"] == "fit-continue"), None)
    if cont is None:
        if budget.left() < 60:
            return False
        timeout, capped = budget.timeout(a.continue_timeout)
        rc, _, err, secs = run_child(trial_argv(found, a.continue_steps), timeout)
        if rc is None and capped:
            return False
        cont = {"kind": "fit-continue", "batch": found, "steps": a.continue_steps, "status": classify(rc, err),
                "wallSeconds": secs, "stderrTail": err[-800:] if rc != 0 else None}
        append(cont)
        print(f"fit: {a.continue_steps} steps at batch {found}: {cont['status']} ({secs} s)", flush=True)
    trials = [r for r in records if r["kind"] == "fit-trial"]
    while True:
        lo, hi = bounds(found, cont["status"], trials)
        batch = next_trial(lo, hi, trials)
        if batch is None:
            return True
        if budget.left() < 45:
            return False
        timeout, capped = budget.timeout(a.trial_timeout)
        rc, _, err, secs = run_child(trial_argv(batch, 3), timeout)
        if rc is None and capped:
            return False
        t = {"kind": "fit-trial", "batch": batch, "status": classify(rc, err), "wallSeconds": secs,
             "stderrTail": err[-800:] if rc not in (0, None) and classify(rc, err) == "error" else None}
        append(t)
        trials.append(t)
        print(f"fit: trial batch {batch}: {t['status']} ({secs} s)", flush=True)


def summarize(records):
    """The fit results from the records: runs used, found vs true maximum, and whether training continued."""
    fit = next((r for r in reversed(records) if r["kind"] == "fit"), None)
    if fit is None:
        return None
    cont = next((r for r in records if r["kind"] == "fit-continue"), None)
    trials = [r for r in records if r["kind"] == "fit-trial"]
    out = {"exitCode": fit["exitCode"], "runsUsed": fit["runsUsed"], "batch": fit["batch"], "fitWallSeconds": fit["wallSeconds"],
           "continued": {k: cont[k] for k in ("batch", "steps", "status")} if cont else None, "trials": len(trials)}
    if fit["batch"] and cont:
        lo, hi = bounds(fit["batch"], cont["status"], trials)
        done = next_trial(lo, hi, trials) is None
        out.update(trueMaxBatch=lo if done else None, trueMaxResolution=(hi - lo) if (done and hi) else None,
                   foundOverTrueMax=round(fit["batch"] / lo, 4) if (done and lo) else None,
                   bisectionComplete=done, bisectionBroke=any(t["status"] in ("error", "timeout") for t in trials))
    return out
