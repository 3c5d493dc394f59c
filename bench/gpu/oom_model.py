"""A small training loop that runs out of GPU memory for real: the batch doubles every step until the
caching allocator raises torch.OutOfMemoryError, which is left uncaught (as in a real crash). Used by
bench/gpu/run-all.sh (step "companion") under `gpumem run --snapshot-on-oom --memory-fraction F`, so the
companion's OOM capture, the snapshot in the run folder and the run report are exercised on a real GPU.

    python3 bench/gpu/oom_model.py [--start-batch 512] [--fraction F]

--fraction caps the process itself (torch.cuda.set_per_process_memory_fraction) for use without gpumem;
under `gpumem run --memory-fraction` leave it out.
"""
import argparse

import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--start-batch", type=int, default=512)
    ap.add_argument("--fraction", type=float)
    a = ap.parse_args()
    if a.fraction:
        torch.cuda.set_per_process_memory_fraction(a.fraction, 0)
    width = 4096
    model = torch.nn.Sequential(*[m for _ in range(4) for m in (torch.nn.Linear(width, width), torch.nn.GELU())]).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    batch = a.start_batch
    while True:
        x = torch.randn(batch, width, device="cuda")
        loss = model(x).square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
        print(f"batch {batch}: ok, reserved {torch.cuda.memory_reserved() / 2**30:.2f} GiB", flush=True)
        batch *= 2


if __name__ == "__main__":
    main()
