"""Whether doctor on the recording shows what the trainer was made to show (bench/gpu/run-all.sh, step record):
worker-cuda naming exactly the trainer's DataLoader workers, and alloc-conf. The recording may replace the
synthetic doctor example only when it does.

    python3 record_verdict.py DOCTOR_REPLAY.json TRAINER.json > verdict.json
"""
import json
import sys

doc, trainer = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
ids = [f["id"] for f in doc.get("findings", [])]
workers = set(trainer.get("workerPids", []))
flagged = {p for f in doc.get("findings", []) if f["id"] == "worker-cuda" for p in f["evidence"].get("pids", [])}
intended = ["worker-cuda", "alloc-conf"]
ok = all(i in ids for i in intended) and bool(workers) and workers <= flagged
print(json.dumps({"intendedFindings": intended, "findings": ids, "workerPids": sorted(workers),
                  "workerPidsFlagged": sorted(flagged), "showsIntendedFindings": ok}, indent=2))
