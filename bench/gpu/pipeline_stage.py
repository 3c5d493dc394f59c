"""The stages of bench/gpu/pipeline.yaml, a real train → eval pipeline for `gpumem pipeline` on a GPU.

    python3 bench/gpu/pipeline_stage.py train --batch B [--steps 300] [--checkpoint PATH]
    python3 bench/gpu/pipeline_stage.py eval [--workers 4] [--batch 256] [--checkpoint PATH]

train: a small CNN on random 64×64 images, saves a checkpoint. eval: loads it and evaluates through a
DataLoader with CPU-only workers (the normal, correct use), so the cleanup check between stages and after
the pipeline has worker processes to verify.
"""
import argparse
import os
import time

import torch
from torch.utils.data import DataLoader, Dataset

DEFAULT_CKPT = os.path.join(os.environ.get("TMPDIR", "/tmp"), "gpumem-gpu-check-pipeline.pt")


def build():
    return torch.nn.Sequential(
        torch.nn.Conv2d(3, 64, 3, padding=1), torch.nn.ReLU(), torch.nn.Conv2d(64, 128, 3, padding=1), torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(128, 10))


class Images(Dataset):
    def __len__(self):
        return 4096

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        return torch.randn(3, 64, 64, generator=g), int(torch.randint(0, 10, (1,), generator=g))


def train(a):
    model = build().cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    t = time.time()
    for step in range(a.steps):
        x = torch.randn(a.batch, 3, 64, 64, device="cuda")
        y = torch.randint(0, 10, (a.batch,), device="cuda")
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    torch.save(model.state_dict(), a.checkpoint)
    print(f"train: {a.steps} steps at batch {a.batch} in {time.time() - t:.1f} s, loss {loss.item():.3f}, "
          f"peak reserved {torch.cuda.max_memory_reserved() / 2**20:.0f} MiB", flush=True)


def evaluate(a):
    model = build().cuda()
    model.load_state_dict(torch.load(a.checkpoint, map_location="cuda"))
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for x, y in DataLoader(Images(), batch_size=a.batch, num_workers=a.workers):
            pred = model(x.cuda()).argmax(1).cpu()
            correct += int((pred == y).sum())
            total += len(y)
    print(f"eval: {total} images with {a.workers} workers, accuracy {correct / total:.3f}, "
          f"peak reserved {torch.cuda.max_memory_reserved() / 2**20:.0f} MiB", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("stage", choices=["train", "eval"])
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--checkpoint", default=DEFAULT_CKPT)
    a = ap.parse_args()
    train(a) if a.stage == "train" else evaluate(a)


if __name__ == "__main__":
    main()
