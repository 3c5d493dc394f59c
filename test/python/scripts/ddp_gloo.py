"""A real two-rank DDP job on the CPU (gloo), for `gpumem run -- torchrun …` tests with real torch.

It knows nothing of gpumem. Each rank trains a small linear model under DistributedDataParallel for a few
steps through a DataLoader, then tells the test's GPU double (a claim file in GPUMEM_TEST_CLAIMS, turned into
a fake-NVML process row) that it holds CLAIM bytes on the GPU it would have used: its LOCAL_RANK, or GPU 0
for every rank in mode "same" (the forgotten torch.cuda.set_device). One "truth {json}" line per rank.

Usage: torchrun --standalone --nproc-per-node 2 ddp_gloo.py MODE [HOLD_SECONDS]   (MODE own | same)
"""
import json
import os
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset

MiB = 1 << 20
CLAIM = 700 * MiB

mode = sys.argv[1]
hold = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0
dist.init_process_group("gloo")
rank, local = dist.get_rank(), int(os.environ["LOCAL_RANK"])
torch.manual_seed(0)
model = DistributedDataParallel(torch.nn.Linear(16, 4))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
data = TensorDataset(torch.randn(64, 16), torch.randn(64, 4))
for x, y in DataLoader(data, batch_size=8):
    optimizer.zero_grad()
    torch.nn.functional.mse_loss(model(x), y).backward()
    optimizer.step()

gpu = 0 if mode == "same" else local
folder = os.environ.get("GPUMEM_TEST_CLAIMS")
if folder:
    path = os.path.join(folder, "%d-%d" % (os.getpid(), gpu))
    with open(path + ".tmp", "w") as f:
        f.write(str(CLAIM))
    os.replace(path + ".tmp", path)
print("truth " + json.dumps({"rank": rank, "localRank": local, "pid": os.getpid(), "gpu": gpu}), flush=True)
time.sleep(hold)
dist.barrier()
dist.destroy_process_group()
