"""A small model for a real `gpumem fit` run (issue 7): tokens (batch × seq × 1024) through 12 blocks of
Linear → GELU → LayerNorm under bf16 autocast, AdamW. Activations dominate (≈ 0.3 GB per sample at seq 2048),
so the largest batch is a few hundred on an 80–141 GB GPU and a step stays well under a second.

    python3 bench/gpu/fit_model.py --batch {batch} --steps {steps} [--seq 2048]

Exits non-zero (uncaught torch.OutOfMemoryError) when the batch does not fit.
"""
import argparse
import os

import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=int(os.environ.get("GPUMEM_BATCH", "8")))
    ap.add_argument("--steps", type=int, default=int(os.environ.get("GPUMEM_STEPS", "5")))
    ap.add_argument("--seq", type=int, default=2048)
    a = ap.parse_args()
    width = 1024
    model = torch.nn.Sequential(*[m for _ in range(12) for m in (
        torch.nn.Linear(width, width), torch.nn.GELU(), torch.nn.LayerNorm(width))]).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for _ in range(a.steps):
        x = torch.randn(a.batch, a.seq, width, device="cuda", dtype=torch.bfloat16)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(x).float().square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    print(f"batch {a.batch}: {a.steps} steps ok, peak reserved {torch.cuda.max_memory_reserved() / 2**30:.2f} GiB", flush=True)


if __name__ == "__main__":
    main()
