"""Holds a known amount of GPU memory through PyTorch's normal allocator, for the ground-truth comparison
of bench/gpu/run-all.sh (step "truth"): nvidia-smi and `gpumem status` are read while this process waits.

    python3 bench/gpu/hold_memory.py --mib 1024 --ready FILE [--seconds 120]

Writes FILE (atomically) once the memory is held: pid, device, torch's allocated/reserved bytes. Exits
after --seconds or on SIGTERM/SIGINT, whichever comes first.
"""
import argparse
import json
import os
import signal
import sys
import time

MiB = 1024 * 1024


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mib", type=int, default=1024)
    ap.add_argument("--ready", required=True)
    ap.add_argument("--seconds", type=float, default=120)
    a = ap.parse_args()
    import torch

    held = torch.empty(a.mib * MiB, dtype=torch.uint8, device="cuda")
    held.fill_(1)  # touch it: the pages are really mapped, not only reserved
    torch.cuda.synchronize()
    s = torch.cuda.memory_stats(0)
    info = {"pid": os.getpid(), "heldMiB": a.mib, "device": torch.cuda.get_device_name(0), "torch": torch.__version__,
            "cuda": torch.version.cuda, "allocatedBytes": s["allocated_bytes.all.current"],
            "reservedBytes": s["reserved_bytes.all.current"], "mem_get_info": list(torch.cuda.mem_get_info(0))}
    tmp = a.ready + ".tmp"
    with open(tmp, "w") as handle:
        json.dump(info, handle)
    os.replace(tmp, a.ready)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        time.sleep(a.seconds)
    except KeyboardInterrupt:
        pass
    del held


if __name__ == "__main__":
    main()
