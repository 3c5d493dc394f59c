"""A tiny PyTorch trainer whose DataLoader workers touch CUDA, the case `gpumem doctor` exists for: each
worker creates its own CUDA context (hundreds of MiB each) that nvidia-smi charges to the worker's pid.
Used by bench/gpu/run-all.sh (step "record") while `gpumem record` runs, to make the bundled example
recording on a real GPU. PYTORCH_CUDA_ALLOC_CONF is left unset on purpose (the `alloc-conf` finding).

    python3 bench/gpu/trainer_with_workers.py [--seconds 40] [--workers 2] [--ready FILE]

--ready FILE is written once the workers hold their contexts: {pid, workerPids, torch, device}.
"""
import argparse
import json
import os
import time

import torch
from torch.utils.data import DataLoader, Dataset


class CudaTouchingImages(Dataset):
    """Random images; the mistake under test: the item code touches CUDA inside the worker process."""

    def __len__(self):
        return 1 << 30

    def __getitem__(self, i):
        if not hasattr(self, "_on_gpu"):
            self._on_gpu = torch.zeros(1, device="cuda")  # first touch creates this worker's CUDA context
        g = torch.Generator().manual_seed(i)
        return torch.randn(3, 64, 64, generator=g), int(torch.randint(0, 10, (1,), generator=g))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=40)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--ready")
    a = ap.parse_args()
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 64, 3, padding=1), torch.nn.ReLU(), torch.nn.Conv2d(64, 64, 3, padding=1), torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(64, 10)).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    # spawn: a forked worker cannot initialise CUDA once the parent has; spawned ones can, and do.
    loader = DataLoader(CudaTouchingImages(), batch_size=a.batch, num_workers=a.workers,
                        multiprocessing_context="spawn", persistent_workers=True)
    it = iter(loader)
    end = time.monotonic() + a.seconds
    step, announced = 0, False
    while time.monotonic() < end:
        x, y = next(it)
        x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        step += 1
        if not announced and step >= 5:
            torch.cuda.synchronize()
            workers = [w.pid for w in getattr(it, "_workers", [])]
            print(f"trainer {os.getpid()}: workers {workers} hold CUDA contexts; training until {a.seconds:.0f} s", flush=True)
            if a.ready:
                with open(a.ready + ".tmp", "w") as handle:
                    json.dump({"pid": os.getpid(), "workerPids": workers, "torch": torch.__version__,
                               "device": torch.cuda.get_device_name(0)}, handle)
                os.replace(a.ready + ".tmp", a.ready)
            announced = True
        time.sleep(0.02)  # a light, steady load: utilisation is measured, not pinned at 100 %
    print(f"trainer: {step} steps, peak reserved {torch.cuda.max_memory_reserved() / 2**20:.0f} MiB", flush=True)


if __name__ == "__main__":
    main()
