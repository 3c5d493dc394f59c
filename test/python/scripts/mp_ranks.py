"""A two-rank job started like ``torch.multiprocessing.spawn``, for `gpumem run` tests with the fake torch.

It knows nothing of gpumem. The parent starts WORLD ranks with the spawn start method (no RANK in their
environment: each learns its rank from ``init_process_group(rank=i)``, as mp.spawn programs do), waits, and,
like mp.spawn, ends the remaining ranks with SIGTERM as soon as one fails. Each rank allocates on its CUDA
device, runs a short DataLoader loop (step timing) and tells the test's GPU double (a claim file in
GPUMEM_TEST_CLAIMS) that it holds reserved + 500 MiB of context (+ NCCL_BYTES with the nccl backend) on the
physical GPU of its device. Ground truth goes to stdout as "truth {json}" lines.

Usage: mp_ranks.py MODE [HOLD_SECONDS]
  MODE own:     rank i uses cuda:i (torch.cuda.set_device done right)
  MODE same:    every rank uses cuda:0 (the forgotten set_device)
  MODE rank0:   like own, and rank 0 keeps 200 MiB more (evaluation on rank 0 only)
  MODE oom:     like own; rank 1 then asks for more than its GPU has, and the OOM ends the job
  MODE nccl:    like own, with the nccl backend and its buffers outside PyTorch
"""
import json
import os
import sys
import time

from _ranks_launch import claim

MiB = 1 << 20
CONTEXT = 500 * MiB
NCCL_BYTES = 1536 * MiB
WORLD = 2


def rank_main(rank, mode, hold):
    import torch
    import torch.distributed as dist

    dist.init_process_group("nccl" if mode == "nccl" else "gloo", rank=rank, world_size=WORLD)
    device = 0 if mode == "same" else rank
    kept = [torch.empty(40 * MiB // 4, device="cuda:%d" % device)]
    if mode == "rank0" and rank == 0:
        kept.append(torch.empty(200 * MiB // 4, device="cuda:%d" % device))

    class Batch:
        shape = (8, 3)

    def batches():
        for _ in range(8):
            time.sleep(0.01)
            yield (Batch(), None)

    for _ in torch.utils.data.DataLoader(batches(), batch_size=8):
        time.sleep(0.02)
    s = torch.cuda.memory_stats(device)
    extra = NCCL_BYTES if mode == "nccl" else 0
    nvml = s["reserved_bytes.all.current"] + CONTEXT + extra
    time.sleep(0.3)  # the companion's statistics go out before the driver shows the total
    claim(device, nvml)
    print("truth " + json.dumps({"rank": rank, "pid": os.getpid(), "device": device, "nvmlBytes": nvml,
                                 "peakAllocatedBytes": s["allocated_bytes.all.peak"],
                                 "peakReservedBytes": s["reserved_bytes.all.peak"]}), flush=True)
    if mode == "oom":
        if rank == 1:
            time.sleep(0.3)
            torch.empty(8 << 30 >> 2, device="cuda:%d" % device)  # raises: more than the GPU has
        time.sleep(hold * 10)  # rank 0 waits in "the next collective" until the parent ends it
    time.sleep(hold)


def main():
    import multiprocessing as mp

    mode = sys.argv[1]
    hold = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=rank_main, args=(i, mode, hold)) for i in range(WORLD)]
    from _ranks_launch import run_ranks
    run_ranks(procs)


if __name__ == "__main__":
    main()
