"""A "training script" for end-to-end tests of `gpumem run` with the fake torch and the fake NVML driver.

It knows nothing of gpumem. It allocates (30 MiB live, 64 MiB cached), then tells the test's GPU double
(a claim file in GPUMEM_TEST_CLAIMS, turned into a fake-NVML process row) that the process holds
reserved + 500 MiB on GPU GPUMEM_TEST_GPU — the 500 MiB standing for the CUDA context and workspaces, as
a real driver would count them. Each ground-truth line on stdout starts with "truth " and holds the
allocator's numbers at that moment.

Usage: supervised_train.py MODE HOLD_SECONDS [GO_FILE]
  MODE oom: after the hold, allocate 4 GiB; the OOM flushes the cache; the claim follows the new
            reserved bytes, and the error is raised uncaught (exit 1, traceback on stderr).
  MODE ok:  exit 0 after the hold.
  MODE env: print the environment as one "env {json}" line and exit 0 (does not import torch).
  GO_FILE:  hold until this file exists (at most HOLD_SECONDS) instead of a fixed time.
"""
import json
import os
import sys
import time

CONTEXT = 500 << 20
MiB = 1 << 20
mode = sys.argv[1]
hold = float(sys.argv[2])
go_file = sys.argv[3] if len(sys.argv) > 3 else None

if mode == "env":
    print("env " + json.dumps(dict(os.environ)), flush=True)
    sys.exit(0)

import torch  # noqa: E402


def claim(nbytes):
    folder = os.environ.get("GPUMEM_TEST_CLAIMS")
    if not folder:
        return
    path = os.path.join(folder, "%d-%s" % (os.getpid(), os.environ.get("GPUMEM_TEST_GPU", "0")))
    with open(path + ".tmp", "w") as f:
        f.write(str(nbytes))
    os.replace(path + ".tmp", path)


def truth(tag):
    s = torch.cuda.memory_stats(0)
    out = {"tag": tag, "pid": os.getpid(), "allocatedBytes": s["allocated_bytes.all.current"], "reservedBytes": s["reserved_bytes.all.current"],
           "peakAllocatedBytes": s["allocated_bytes.all.peak"], "peakReservedBytes": s["reserved_bytes.all.peak"],
           "numAllocRetries": s["num_alloc_retries"], "numOoms": s["num_ooms"], "nvmlBytes": s["reserved_bytes.all.current"] + CONTEXT}
    print("truth " + json.dumps(out), flush=True)
    return out


held = [torch.empty(10 * MiB // 4, device="cuda") for _ in range(3)]
scratch = torch.empty(64 * MiB // 4, device="cuda")
del scratch
# Let the companion's statistics go out before the driver shows the new total, as on a real GPU where
# the context and segments exist before anything reads them.
time.sleep(0.3)
claim(truth("hold")["nvmlBytes"])
end = time.time() + hold
while time.time() < end and not (go_file and os.path.exists(go_file)):
    time.sleep(0.02)

if mode == "oom":
    try:
        torch.empty(4 << 30 >> 2, device="cuda")
    except torch.cuda.OutOfMemoryError:
        claim(truth("after-oom")["nvmlBytes"])
        time.sleep(0.3)
        raise
