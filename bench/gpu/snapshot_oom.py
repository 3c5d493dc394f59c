"""Writes real PyTorch memory snapshots (issue 8): allocation history on, a small model trained at a batch
that fits (snapshot "before"), then the batch doubled until the allocator raises OutOfMemoryError (snapshot
"oom", taken right after the OOM, so the trace holds the `oom` event). The process caps itself with
set_per_process_memory_fraction so the OOM comes quickly and the files stay small.

    python3 bench/gpu/snapshot_oom.py --out-dir DIR [--fraction 0.04] [--max-entries 20000]

Files: DIR/before.pickle, DIR/oom.pickle (torch.cuda.memory._dump_snapshot: pickle, trusted here since
this process wrote them) and DIR/snapshot-run.json (torch version, memory_stats at the OOM, request size).
"""
import argparse
import json
import os

import torch


def record_history(max_entries):
    """Switch history on with whichever signature this torch has (2.1+: enabled=…, older: positional)."""
    rec = torch.cuda.memory._record_memory_history
    try:
        rec(enabled="all", context="all", stacks="python", max_entries=max_entries)
        return "enabled=all,stacks=python"
    except TypeError:
        rec(True, trace_alloc_max_entries=max_entries, trace_alloc_record_context=True)
        return "legacy"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("--fraction", type=float, default=0.04)
    ap.add_argument("--max-entries", type=int, default=20000)
    a = ap.parse_args()
    os.makedirs(a.out_dir, exist_ok=True)
    style = record_history(a.max_entries)
    torch.cuda.set_per_process_memory_fraction(a.fraction, 0)
    width = 2048
    model = torch.nn.Sequential(*[m for _ in range(6) for m in (torch.nn.Linear(width, width), torch.nn.GELU())]).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def step(batch):
        x = torch.randn(batch, width, device="cuda")
        loss = model(x).square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        torch.cuda.synchronize()

    batch = 256
    for _ in range(3):
        step(batch)
    torch.cuda.memory._dump_snapshot(os.path.join(a.out_dir, "before.pickle"))
    oom = None
    while oom is None:
        batch *= 2
        try:
            step(batch)
        except torch.cuda.OutOfMemoryError as e:  # torch.OutOfMemoryError is the same class on 2.x
            oom = str(e).splitlines()[0]
            torch.cuda.memory._dump_snapshot(os.path.join(a.out_dir, "oom.pickle"))
    stats = torch.cuda.memory_stats(0)
    torch.cuda.memory._record_memory_history(enabled=None) if style != "legacy" else torch.cuda.memory._record_memory_history(False)
    info = {"torch": torch.__version__, "device": torch.cuda.get_device_name(0), "historyStyle": style,
            "fraction": a.fraction, "maxEntries": a.max_entries, "oomBatch": batch, "oomMessage": oom,
            "memoryStatsAtOom": {k: v for k, v in stats.items() if k.endswith(".all.current") or k.endswith(".all.peak")
                                 or k in ("num_ooms", "num_alloc_retries")}}
    with open(os.path.join(a.out_dir, "snapshot-run.json"), "w") as handle:
        json.dump(info, handle, indent=2)
    print(f"snapshots written to {a.out_dir}; OOM at batch {batch}: {oom}", flush=True)


if __name__ == "__main__":
    main()
