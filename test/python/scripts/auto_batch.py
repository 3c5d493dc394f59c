"""A training script for `gpumem run --batch auto` tests (real torch).

Traced (torch sees the tracer's fake GPU) it trains a two-layer MLP on inputs of 256 × 1024 floats per sample for
2 steps of ACCUM micro-batches of BATCH, so its memory grows with the batch. Run for real on this CPU-only machine
it does no compute: it tells the test's GPU double (a claim file in GPUMEM_TEST_CLAIMS) that it holds
FIXED + BATCH × PER_SAMPLE bytes on GPU 0, holds them HOLD seconds, and prints "ran batch B accum A".

Usage: auto_batch.py BATCH ACCUM [HOLD_SECONDS]
"""
import os
import sys
import time

import torch

MiB = 1 << 20
FIXED, PER_SAMPLE = 900 * MiB, 4 * MiB

batch, accum = int(sys.argv[1]), int(sys.argv[2])
hold = float(sys.argv[3]) if len(sys.argv) > 3 else 0.5
if torch.cuda.is_available():
    model = torch.nn.Sequential(torch.nn.Linear(1024, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 1024)).cuda()
    optimizer = torch.optim.AdamW(model.parameters())
    for _ in range(2):
        for _ in range(accum):
            model(torch.randn(batch, 256, 1024, device="cuda")).square().mean().backward()
        optimizer.step()
        optimizer.zero_grad()
else:
    folder = os.environ["GPUMEM_TEST_CLAIMS"]
    path = os.path.join(folder, "%d-0" % os.getpid())
    with open(path + ".tmp", "w") as f:
        f.write(str(FIXED + batch * PER_SAMPLE))
    os.replace(path + ".tmp", path)
    time.sleep(hold)
print("ran batch %d accum %d" % (batch, accum), flush=True)
