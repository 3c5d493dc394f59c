"""A small data-parallel training step for `gpumem estimate --world-size` and its ground truth.

Under gpumem's tracer (GPUMEM_ESTIMATE_TRACE set) it runs on the fake process group and fake tensors. Run by
torchrun on the CPU (gloo, real ranks), it records every allocation of the CPU allocator with the profiler and
prints one "truth {json}" line per rank: the peak of live bytes over the steps, up to the end of the first
forward pass (construction included), and the bytes live at the end.
Both runs build the model straight on the device, so the same storages are counted on both sides.

Usage: torchrun --nproc-per-node 2 world_step.py {ddp|fsdp2} [--bucket-cap-mb M] [--grad-as-bucket-view]
       [--find-unused] [--no-reshard] [--bf16] [--rank0-extra-mb M] [--batch B] [--steps S]
"""
import argparse
import json
import os

import torch
import torch.distributed as dist

p = argparse.ArgumentParser()
p.add_argument("mode", choices=["ddp", "fsdp2"])
p.add_argument("--bucket-cap-mb", type=float, default=25)
p.add_argument("--grad-as-bucket-view", action="store_true")
p.add_argument("--find-unused", action="store_true")
p.add_argument("--no-reshard", action="store_true")
p.add_argument("--bf16", action="store_true")
p.add_argument("--rank0-extra-mb", type=float, default=0)
p.add_argument("--batch", type=int, default=8)
p.add_argument("--steps", type=int, default=3)
a = p.parse_args()

traced = bool(os.environ.get("GPUMEM_ESTIMATE_TRACE"))
dist.init_process_group("gloo")
rank = dist.get_rank()
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
WIDTH, LAYERS = 512, 4
FORWARD_DONE = "gpumem-test: first forward done"

profiler = None
if not traced:
    profiler = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], profile_memory=True)
    profiler.__enter__()

class Net(torch.nn.Module):
    def __init__(self, unused):
        super().__init__()
        self.body = torch.nn.Sequential(*[torch.nn.Linear(WIDTH, WIDTH) for _ in range(LAYERS)])
        # Never called: its gradient never becomes ready, which find_unused_parameters is for.
        self.unused = torch.nn.Linear(WIDTH, WIDTH) if unused else None

    def forward(self, x):
        return self.body(x)


torch.manual_seed(0)
model = Net(a.find_unused).to(device)
if a.mode == "ddp":
    from torch.nn.parallel import DistributedDataParallel
    model = DistributedDataParallel(model, bucket_cap_mb=a.bucket_cap_mb, find_unused_parameters=a.find_unused,
                                    gradient_as_bucket_view=a.grad_as_bucket_view)
else:
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
    policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32) if a.bf16 else MixedPrecisionPolicy()
    for layer in model.body:
        fully_shard(layer, reshard_after_forward=not a.no_reshard, mp_policy=policy)
    fully_shard(model, reshard_after_forward=not a.no_reshard, mp_policy=policy)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=True)
extra = None
for step in range(a.steps):
    x = torch.randn(a.batch, WIDTH, device=device)
    loss = model(x).float().pow(2).mean()
    if profiler is not None and step == 0:
        with torch.profiler.record_function(FORWARD_DONE):  # marks the end of the first forward in the profile
            pass
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    if rank == 0 and a.rank0_extra_mb:
        # Rank 0 keeps something the others do not (an evaluation buffer, say).
        extra = torch.empty(int(a.rank0_extra_mb * 2**20), dtype=torch.uint8, device=device)

def _walk(events):
    for e in events:
        yield e
        yield from _walk(e.children)


if profiler is not None:
    profiler.__exit__(None, None, None)
    # The profiler sees the allocations of this thread. gloo's worker threads sometimes drop the last reference
    # to a buffer, and that free is not reported: a block allocated again at an address still held was freed.
    held, live, peak, forward_peak = {}, 0, 0, None
    tree = list(_walk(profiler.profiler.kineto_results.experimental_event_tree()))
    forward_done = min(e.start_time_ns for e in tree if e.name == FORWARD_DONE)
    allocations = [e for e in tree
                   if type(e.extra_fields).__name__ == "_ExtraFields_Allocation" and e.extra_fields.device.type == "cpu"]
    for timed in sorted(allocations, key=lambda e: e.start_time_ns):
        if forward_peak is None and timed.start_time_ns > forward_done:
            forward_peak = peak
        event = timed.extra_fields
        if event.alloc_size > 0:
            live -= held.pop(event.ptr, 0)
            held[event.ptr] = event.alloc_size
            live += event.alloc_size
        else:
            live -= held.pop(event.ptr, 0)
        peak = max(peak, live)
    print("truth " + json.dumps({"rank": rank, "peakBytes": peak, "forwardPeakBytes": forward_peak, "endBytes": live}),
          flush=True)
dist.destroy_process_group()
