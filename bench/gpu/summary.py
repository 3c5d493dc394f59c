"""The summary of one bench/gpu/run-all.sh call: the machine (GPU, driver, CUDA, torch, node, gpumem commit) and
each step's status, exit code, start and end (seconds into the call) and headline.

    python3 summary.py W LABEL ROOT ARGS DRY > summary.json     (run-all.sh writes it after every step)
    python3 summary.py --table summary.json                     (the table run-all.sh prints last)

Document kind gpumem.gpu-check.summary, schemaVersion 2 (2 added per step startS/endS/headline, dryRun and the
budget; a step not yet finished is absent).
"""
import glob
import json
import os
import subprocess
import sys
import time


def run(*cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout.strip()
    except Exception:
        return None


def summary(w, label, root, args, dry):
    q = [] if dry else (run("nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader") or "").splitlines()
    head = [] if dry else (run("nvidia-smi") or "").splitlines()
    cuda = next((l.split("CUDA Version:")[1].split()[0] for l in head if "CUDA Version:" in l), None)
    try:
        versions = json.load(open(os.path.join(w, "env", "versions.json")))
    except Exception:
        versions = {}
    commit_file = os.path.join(root, ".device", "commit.txt")
    commit = open(commit_file).read().strip() if os.path.exists(commit_file) and not dry else run("git", "-C", root, "rev-parse", "HEAD")
    steps = {}
    for f in sorted(glob.glob(os.path.join(w, "*", "status")), key=lambda p: float(open(p).read().split()[3])):
        st, rc, took, start, end = open(f).read().split()
        name = os.path.basename(os.path.dirname(f))
        head_file = os.path.join(os.path.dirname(f), "headline.txt")
        headline = open(head_file).read().strip() if os.path.exists(head_file) else ""
        log_file = os.path.join(os.path.dirname(f), "step.log")
        if not headline and st != "ok" and os.path.exists(log_file):
            # A step that failed before its headline: the last thing it said.
            said = [l.strip() for l in open(log_file, errors="replace").read().splitlines() if l.strip()]
            headline = said[-1] if said else ""
        steps[name] = {"status": st, "exitCode": int(rc), "seconds": int(took), "startS": int(start), "endS": int(end),
                       "headline": headline}
    return {
        "schemaVersion": 2, "kind": "gpumem.gpu-check.summary", "label": label, "dryRun": dry,
        "date": time.strftime("%Y-%m-%d"), "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "gpus": [dict(zip(("name", "driver", "memoryTotal"), [x.strip() for x in l.split(",")])) for l in q],
        "gpu": q[0].split(",")[0].strip() if q else None, "driver": q[0].split(",")[1].strip() if q else None,
        "cudaDriver": cuda, "torch": versions.get("torch"), "torchCuda": versions.get("torchCuda"),
        "python": versions.get("python"), "node": run("node", "--version"), "gpumemCommit": commit,
        "budgetS": int(os.environ.get("GPU_CHECK_BUDGET_S", "480")),
        "command": "bash bench/gpu/run-all.sh %s%s" % ("--dry-run " if dry else "", args), "steps": steps}


def table(doc):
    rows = [("step", "status", "start", "end", "s", "result")]
    for name, s in doc["steps"].items():
        rows.append((name, s["status"], str(s["startS"]), str(s["endS"]), str(s["seconds"]), s["headline"][:110]))
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    lines = ["summary of %s (%s, %s, torch %s):" % (doc["command"], doc.get("gpu") or "no GPU", doc.get("driver") or "-", doc.get("torch"))]
    for r in rows:
        lines.append("  " + "  ".join(r[i].ljust(widths[i]) for i in range(5)) + "  " + r[5])
    return "\n".join(lines)


if __name__ == "__main__":
    if sys.argv[1] == "--table":
        print(table(json.load(open(sys.argv[2]))))
    else:
        w, label, root, args, dry = sys.argv[1:6]
        print(json.dumps(summary(w, label, root, args, dry == "1"), indent=2))
