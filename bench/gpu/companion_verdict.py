"""Whether `gpumem run --snapshot-on-oom` caught the OOM of oom_model.py with the companion's allocator numbers
and a snapshot in the run folder (bench/gpu/run-all.sh, step companion).

    python3 companion_verdict.py OOM_RUN.json > verdict.json
"""
import glob
import json
import os
import sys

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
