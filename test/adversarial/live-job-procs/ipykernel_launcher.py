"""Started as `python -m ipykernel_launcher -f FILE`, like a Jupyter kernel: it runs a cell that iterates a
fork DataLoader (the kernel itself works on the CPU, its 2 workers wait). Prints its pids as one JSON line."""
import json, os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import job  # noqa: E402

job.hold_device(1)
workers = job.start_workers("fork", 1, -1)
print(json.dumps({"pid": os.getpid(), "workers": workers}), flush=True)
job.wait(True)
