"""Cost of one companion statistics sample (memory_stats → message → JSON → socket), against the fake torch.

Prints one JSON line: microseconds per sample with the companion's full path, and per bare
``torch.cuda.memory_stats()`` call (the peer: what any in-process logger has to pay at least).
Run by bench/companion.bench.ts with the fake torch on PYTHONPATH and a listening socket in argv[1].
"""
import json
import sys
import time

import torch

from gpumem_torch._channel import Channel
from gpumem_torch._companion import Companion
from gpumem_torch._config import Config

N = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
keep = [torch.empty(1 << 20, device="cuda") for _ in range(4)]
companion = Companion(torch, Config({"GPUMEM_COMPANION_CHANNEL": "unix:" + sys.argv[1]}), Channel("unix:" + sys.argv[1]))


def per_call_us(fn):
    for _ in range(200):
        fn()
    start = time.perf_counter()
    for _ in range(N):
        fn()
    return (time.perf_counter() - start) / N * 1e6


sample_us = per_call_us(lambda: companion.sample(force=True))
stats_us = per_call_us(lambda: torch.cuda.memory_stats(0))
companion.channel.close()
print(json.dumps({"samples": N, "sampleUs": sample_us, "memoryStatsUs": stats_us, "dropped": companion.channel.dropped}))
