"""A tiny "training script" for the fake torch: allocates, frees, OOMs once (caught), prints its ground truth.

It knows nothing of gpumem. The last stdout line is JSON with the numbers the companion must have reported.
"""
import json
import sys
import time

import torch

MiB = 1 << 20
hold = [torch.empty(10 * MiB // 4, device="cuda") for _ in range(3)]   # 3 × 10 MiB, one 30 MiB... segments
scratch = torch.empty(64 * MiB // 4, device="cuda")
del scratch                                                           # 64 MiB stays reserved (cached)
time.sleep(float(sys.argv[1]) if len(sys.argv) > 1 else 0.3)
oom_caught = False
try:
    torch.empty(4 << 30 >> 2, device="cuda")                          # 4 GiB: never fits in the fake 1 GiB
except torch.cuda.OutOfMemoryError:
    oom_caught = True
stats = torch.cuda.memory_stats(0)
print(json.dumps({
    "allocatedBytes": stats["allocated_bytes.all.current"],
    "reservedBytes": stats["reserved_bytes.all.current"],
    "peakAllocatedBytes": stats["allocated_bytes.all.peak"],
    "numOoms": stats["num_ooms"],
    "numAllocRetries": stats["num_alloc_retries"],
    "oomCaught": oom_caught,
}))
