"""A small stand-in for ``torch`` with a simulated CUDA caching allocator, for tests without a GPU.

Each folder next to this file (v1_13, v2_0, …) holds a ``torch`` package that calls ``install`` with the
features of one PyTorch generation, so the companion's capability probing meets the real API shapes,
including the ones that are missing. The allocator keeps exact, predictable counters: allocations round
up to 512 B; a new segment is 2 MiB (≤ 1 MiB requests), 20 MiB (< 10 MiB) or the request rounded up to
2 MiB; memory freed by tensors stays reserved until ``empty_cache``.

Environment: FAKE_TORCH_CUDA=0 (no GPU), FAKE_TORCH_DEVICES (default 1), FAKE_TORCH_TOTAL_BYTES (default 1 GiB),
FAKE_TORCH_SNAPSHOT_BLOCKS=1 (while history is recorded, ``_snapshot()`` lists each live tensor as an
``active_allocated`` block with the Python frames that allocated it, innermost first, as torch >= 2.1 does).
"""
import os
import sys
import threading
import traceback
import types

MiB = 1 << 20


def _round_block(n):
    return max(512, (n + 511) // 512 * 512)


def _segment_size(n):
    if n <= MiB:
        return 2 * MiB
    if n < 10 * MiB:
        return 20 * MiB
    return (n + 2 * MiB - 1) // (2 * MiB) * (2 * MiB)


class _Device:
    def __init__(self, index, total):
        self.index = index
        self.total = total
        self.fraction = None
        self.allocated = 0
        self.reserved = 0
        self.requested = 0
        self.peak_allocated = 0
        self.peak_reserved = 0
        self.retries = 0
        self.ooms = 0
        self.allocs = 0
        self.frees = 0
        self.segments = []  # sizes of cudaMalloc'd segments

    def limit(self):
        return int(self.total * self.fraction) if self.fraction is not None else self.total


class Fake:
    """The simulated CUDA state shared by one fake torch module."""

    def __init__(self, features):
        self.features = features
        self.available = os.environ.get("FAKE_TORCH_CUDA", "1") != "0"
        count = int(os.environ.get("FAKE_TORCH_DEVICES", "1")) if self.available else 0
        total = int(os.environ.get("FAKE_TORCH_TOTAL_BYTES", str(1 << 30)))
        self.devices = [_Device(i, total) for i in range(count)]
        self.initialized = False
        self.initializing = False
        self.queued = []
        self.observers = []
        self.history = None  # (max_entries or None, list of entries)
        self.lock = threading.Lock()
        self.address = 0x7F0000000000
        self.snapshot_blocks = os.environ.get("FAKE_TORCH_SNAPSHOT_BLOCKS") == "1"
        self.last_address = None
        self.live = {}  # address -> block, while history is recorded and FAKE_TORCH_SNAPSHOT_BLOCKS=1

    # -- init ---------------------------------------------------------------------------------------------
    def lazy_init(self):
        if self.initialized or self.initializing:
            return
        if not self.available:
            raise RuntimeError("Found no NVIDIA driver on your system.")
        self.initializing = True
        try:
            for fn in self.queued:
                fn()
        finally:
            self.queued = []
            self.initializing = False
        self.initialized = True

    def lazy_call(self, fn, **kwargs):
        if self.initialized:
            fn()
        else:
            self.queued.append(fn)

    # -- allocator -----------------------------------------------------------------------------------------
    def record(self, action, dev, addr, size):
        if self.history is None:
            return
        limit, entries = self.history
        entries.append({"action": action, "addr": addr, "size": size, "stream": 0, "device": dev.index,
                        "frames": [{"filename": "train.py", "line": 1, "name": "step"}]})
        if limit is not None and len(entries) > limit:
            del entries[: len(entries) - limit]

    def malloc(self, index, nbytes):
        self.lazy_init()
        dev = self.devices[index]
        size = _round_block(nbytes)
        with self.lock:
            if dev.allocated + size > dev.reserved:
                segment = _segment_size(size)
                if dev.reserved + segment > dev.limit():
                    # Release every cached byte and retry once, as the real allocator does.
                    dev.retries += 1
                    dev.reserved = max(dev.allocated, 0)
                    dev.segments = [dev.reserved] if dev.reserved else []
                    if dev.reserved + segment > dev.limit():
                        dev.ooms += 1
                        free = dev.total - dev.reserved
                        self.record(dev_action("oom"), dev, free, segment)
                        oom = (dev.index, segment, dev.limit() if dev.fraction is not None else dev.total, free)
                    else:
                        oom = None
                else:
                    oom = None
                if oom is None:
                    dev.reserved += segment
                    dev.segments.append(segment)
                    dev.peak_reserved = max(dev.peak_reserved, dev.reserved)
                    self.record("segment_alloc", dev, self.address, segment)
            else:
                oom = None
            if oom is None:
                dev.allocated += size
                dev.requested += nbytes
                dev.allocs += 1
                dev.peak_allocated = max(dev.peak_allocated, dev.allocated)
                self.address += size
                self.record("alloc", dev, self.address, size)
                if self.snapshot_blocks and self.history is not None:
                    # Innermost first, without the fake's own frames (malloc, Tensor.__init__, empty).
                    stack = traceback.extract_stack()[:-3]
                    frames = [{"filename": f.filename, "line": f.lineno, "name": f.name} for f in reversed(stack)]
                    self.live[self.address] = {"device": dev.index, "address": self.address, "size": size,
                                               "requested_size": nbytes, "state": "active_allocated", "frames": frames}
        self.last_address = self.address if oom is None else None
        if oom is not None:
            for observer in list(self.observers):
                observer(*oom)
            raise self.oom_error(dev, segment)
        return size

    def free(self, index, size, nbytes, address=None):
        dev = self.devices[index]
        with self.lock:
            self.live.pop(address, None)
            dev.allocated -= size
            dev.requested -= nbytes
            dev.frees += 1
            self.record("free_completed", dev, 0, size)

    def empty_cache(self):
        for dev in self.devices:
            with self.lock:
                dev.reserved = dev.allocated
                dev.segments = [dev.allocated] if dev.allocated else []

    def oom_error(self, dev, segment):
        gib = 1 << 30
        # As torch 2.2+ words it: "N allowed; " only when a memory fraction is set (the device's free memory
        # stays the device's, whatever the fraction).
        allowed = "%.2f GiB allowed; " % (dev.limit() / gib) if dev.fraction is not None else ""
        text = ("CUDA out of memory. Tried to allocate %.2f MiB. GPU %d has a total capacity of %.2f GiB of which "
                "%.2f GiB is free. %sOf the allocated memory %.2f MiB is allocated by PyTorch, and %.2f MiB is "
                "reserved by PyTorch but unallocated." % (
                    segment / MiB, dev.index, dev.total / gib, (dev.total - dev.reserved) / gib, allowed,
                    dev.allocated / MiB, (dev.reserved - dev.allocated) / MiB))
        return self.features["oom_class"](text)

    def stats(self, index):
        if not self.initialized:
            return {}
        dev = self.devices[index]
        out = {
            "allocated_bytes.all.current": dev.allocated,
            "allocated_bytes.all.peak": dev.peak_allocated,
            "reserved_bytes.all.current": dev.reserved,
            "reserved_bytes.all.peak": dev.peak_reserved,
            "active_bytes.all.current": dev.allocated,
            "active_bytes.all.peak": dev.peak_allocated,
            "inactive_split_bytes.all.current": dev.reserved - dev.allocated,
            "inactive_split_bytes.all.peak": dev.peak_reserved,
            "num_alloc_retries": dev.retries,
            "num_ooms": dev.ooms,
            "allocation.all.current": dev.allocs - dev.frees,
        }
        if self.features.get("requested_key", True):
            out["requested_bytes.all.current"] = dev.requested
        if self.features.get("device_alloc_keys"):
            out["num_device_alloc"] = len(dev.segments)
            out["num_device_free"] = 0
        return out

    def snapshot(self):
        segments = []
        for dev in self.devices:
            blocks = [b for b in self.live.values() if b["device"] == dev.index]
            for size in dev.segments:
                segments.append({"device": dev.index, "address": 0x7F0000000000, "total_size": size,
                                 "allocated_size": min(size, dev.allocated), "active_size": min(size, dev.allocated),
                                 "stream": 0, "segment_type": "large", "blocks": blocks})
                blocks = []  # every live block listed once, in the device's first segment
        result = {"segments": segments}
        if self.features.get("device_traces", True):
            entries = list(self.history[1]) if self.history else []
            result["device_traces"] = [entries if d.index == 0 else [] for d in self.devices]
        return result


def dev_action(name):
    return name


def _parse_device(fake, device):
    if device is None:
        return None
    if isinstance(device, int):
        return device
    text = str(device)
    if text == "cpu":
        return None
    if text.startswith("cuda"):
        return int(text.split(":", 1)[1]) if ":" in text else 0
    raise ValueError("unknown device %r" % device)
