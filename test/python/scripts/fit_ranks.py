"""A two-rank job for `gpumem fit --world-size 2` with the fake torch, started like ``torch.multiprocessing.spawn``.

It knows nothing of gpumem. Each rank joins the process group, holds FIXED + PER × BATCH bytes of activations on
its own GPU (rank 0 also RANK0_EXTRA: the evaluation buffer only rank 0 keeps) for STEPS short steps, and tells
the test's GPU double (a claim file in GPUMEM_TEST_CLAIMS) that it holds its reserved bytes + 500 MiB of context.
A rank whose request is more than its fake GPU has (FAKE_TORCH_TOTAL_BYTES) raises the fake torch's CUDA OOM,
and, as mp.spawn does, the parent then ends the other rank and exits 1. One "truth {json}" line per rank.

Usage: fit_ranks.py BATCH STEPS FIXED PER [RANK0_EXTRA]
"""
import json
import sys
import time

from _ranks_launch import claim

MiB = 1 << 20
CONTEXT = 500 * MiB
WORLD = 2


def rank_main(rank, batch, steps, fixed, per, extra):
    import torch
    import torch.distributed as dist

    dist.init_process_group("gloo", rank=rank, world_size=WORLD)
    want = fixed + per * batch + (extra if rank == 0 else 0)
    kept = torch.empty(want // 4, device="cuda:%d" % rank)  # noqa: F841  (held through the steps)
    reserved = torch.cuda.memory_stats(rank)["reserved_bytes.all.current"]
    claim(rank, reserved + CONTEXT)
    print("truth " + json.dumps({"rank": rank, "batch": batch, "nvmlBytes": reserved + CONTEXT}), flush=True)
    time.sleep(0.08 * steps)


def main():
    import multiprocessing as mp

    batch, steps, fixed, per = (int(v) for v in sys.argv[1:5])
    extra = int(sys.argv[5]) if len(sys.argv) > 5 else 0
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=rank_main, args=(i, batch, steps, fixed, per, extra)) for i in range(WORLD)]
    from _ranks_launch import run_ranks
    run_ranks(procs)


if __name__ == "__main__":
    main()
