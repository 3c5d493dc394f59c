"""The explicit API: memory helpers a training script can call directly.

What these can free, in one place: only memory *this process* holds in PyTorch's cache. Memory of tensors
that are still referenced somewhere stays; the CUDA context (typically 300-600 MiB) and library workspaces
(cuBLAS, cuDNN, NCCL) stay until the process exits; other processes' memory is never touched. Every
function works without a GPU: the printing ones say "no CUDA device" with the likely cause instead of
printing zeros, the others return nothing freed. Each imports torch only when called.
"""
import contextlib
import gc
import sys

from ._cuda import _requested_index, device_problem
from ._format import format_bytes

_STAT_KEYS = (
    ("allocated_bytes", "allocated_bytes.all.current"),
    ("reserved_bytes", "reserved_bytes.all.current"),
    ("active_bytes", "active_bytes.all.current"),
    ("inactive_split_bytes", "inactive_split_bytes.all.current"),
    ("peak_allocated_bytes", "allocated_bytes.all.peak"),
    ("peak_reserved_bytes", "reserved_bytes.all.peak"),
    ("num_alloc_retries", "num_alloc_retries"),
    ("num_ooms", "num_ooms"),
)


def _torch():
    import torch
    return torch


def _cuda_live(torch):
    try:
        return bool(torch.cuda.is_available()) and bool(torch.cuda.is_initialized())
    except Exception:
        return False


def _devices(torch, device):
    if device is not None:
        return [_index(torch, device)]
    return list(range(torch.cuda.device_count()))


def _index(torch, device):
    # "cuda" with no index, like no device at all, means the current device.
    index = _requested_index(device)
    return torch.cuda.current_device() if index is None else index


def _reserved_total(torch):
    if not _cuda_live(torch):
        return 0
    return sum(int(torch.cuda.memory_reserved(d)) for d in range(torch.cuda.device_count()))


def clear_cuda_memory():
    """Runs the garbage collector, returns PyTorch's unused cached blocks to the driver, and releases CUDA IPC
    memory no longer shared with other processes; returns the bytes released (drop in reserved memory).

    Frees: cached blocks of this process that no tensor uses. Cannot free: tensors you still reference,
    segments partly in use (fragmentation), the CUDA context, library workspaces, other processes' memory.
    """
    torch = _torch()
    before = _reserved_total(torch)
    gc.collect()
    if not _cuda_live(torch):
        return 0
    torch.cuda.empty_cache()
    ipc_collect = getattr(torch.cuda, "ipc_collect", None)
    if callable(ipc_collect):
        ipc_collect()
    return max(0, before - _reserved_total(torch))


def memory_info(device=None):
    """PyTorch's view of one device as a dict of integer bytes and counters.

    Keys: device, allocated_bytes, reserved_bytes, active_bytes, inactive_split_bytes, peak_allocated_bytes,
    peak_reserved_bytes, num_alloc_retries, num_ooms, free_bytes, total_bytes, no_cuda. A key this torch
    does not report is None. Before CUDA is initialised everything PyTorch-side is 0 and free/total are None,
    because asking the driver would initialise CUDA. When the device cannot be used at all (no CUDA, or an
    index out of range) every figure is None and ``no_cuda`` holds the likely cause (otherwise None).
    """
    torch = _torch()
    problem = device_problem(torch, device)
    if problem is not None:
        info = {"device": device if isinstance(device, int) else 0}
        info.update({name: None for name, _ in _STAT_KEYS})
        info.update({"free_bytes": None, "total_bytes": None, "no_cuda": problem})
        return info
    live = _cuda_live(torch)
    index = _index(torch, device) if live else (device if isinstance(device, int) else 0)
    info = {"device": index, "no_cuda": None}
    raw = torch.cuda.memory_stats(index) if live else {}
    for name, key in _STAT_KEYS:
        value = raw.get(key, None if live else 0)
        info[name] = None if value is None else int(value)
    info["free_bytes"], info["total_bytes"] = None, None
    mem_get_info = getattr(torch.cuda, "mem_get_info", None)
    if live and callable(mem_get_info):
        free, total = mem_get_info(index)
        info["free_bytes"], info["total_bytes"] = int(free), int(total)
    return info


def print_memory_info(tag="", device=None, file=None):
    """Prints one line with allocated, reserved, peak, retries and free/total for a device; returns the dict."""
    info = memory_info(device)
    if info["no_cuda"] is not None:
        print("[gpumem]%s no CUDA device: %s" % (" " + tag if tag else "", info["no_cuda"]), file=file or sys.stdout)
        return info
    parts = [
        "[gpumem]" + (" " + tag if tag else ""),
        "cuda:%d" % info["device"],
        "allocated %s" % format_bytes(info["allocated_bytes"]),
        "reserved %s" % format_bytes(info["reserved_bytes"]),
        "peak %s" % format_bytes(info["peak_allocated_bytes"]),
    ]
    if info["num_alloc_retries"]:
        parts.append("alloc retries %d" % info["num_alloc_retries"])
    if info["total_bytes"] is not None:
        parts.append("free %s of %s" % (format_bytes(info["free_bytes"]), format_bytes(info["total_bytes"])))
    print(" · ".join(parts), file=file or sys.stdout)
    return info


def reset_peak(device=None):
    """Resets the peak statistics so the next peak measures only what follows (all devices by default)."""
    torch = _torch()
    if not _cuda_live(torch):
        return
    reset = getattr(torch.cuda, "reset_peak_memory_stats", None) or torch.cuda.reset_max_memory_allocated
    for d in _devices(torch, device):
        reset(d)


def set_memory_fraction(fraction, device=None):
    """Caps how much of a device's memory this process's allocator may reserve (0 < fraction ≤ 1).

    It frees nothing and reserves nothing; an allocation beyond the cap raises an OOM. The CUDA context and
    library workspaces are not counted against the cap. Applies to every visible device by default.
    """
    if not isinstance(fraction, (int, float)) or not 0 < fraction <= 1:
        raise ValueError("memory fraction must be a number in (0, 1], got %r" % (fraction,))
    torch = _torch()
    problem = device_problem(torch, device)
    if problem is not None:
        raise RuntimeError("gpumem: memory fraction not set, no CUDA device: %s" % problem)
    for d in _devices(torch, device):
        torch.cuda.set_per_process_memory_fraction(float(fraction), d)


def to_cpu(value):
    """Returns a CPU copy of a tensor (or of every tensor in a list, tuple or dict), detached from autograd.

    The GPU memory is released only once no other reference to the GPU tensor remains (rebind your variable:
    ``x = to_cpu(x)``), and it returns to PyTorch's cache, not the driver, until ``clear_cuda_memory()``.
    """
    if isinstance(value, dict):
        return {k: to_cpu(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(to_cpu(v) for v in value)
    if hasattr(value, "detach") and hasattr(value, "cpu"):
        return value.detach().cpu()
    return value


def release_model(model):
    """Moves a model's parameters and buffers to the CPU, drops its gradients, and clears the cache; returns
    the bytes released to the driver.

    It cannot drop references it does not own: delete your own variable (and the optimizer, whose state holds
    GPU tensors) for the model's memory to go. After this call the model still works on the CPU.
    """
    torch = _torch()
    before = _reserved_total(torch)
    parameters = getattr(model, "parameters", None)
    if callable(parameters):
        for p in parameters():
            p.grad = None
    model.to("cpu")
    gc.collect()
    if _cuda_live(torch):
        torch.cuda.empty_cache()
    return max(0, before - _reserved_total(torch))


class MemoryBlock:
    """What ``track_memory`` measured: peak and net change of allocated bytes over the block."""

    def __init__(self, name, device):
        self.name = name
        self.device = device
        self.start_bytes = 0
        self.end_bytes = 0
        self.peak_bytes = 0

    @property
    def delta_bytes(self):
        """Allocated at the end minus allocated at the start (tensors the block left behind)."""
        return self.end_bytes - self.start_bytes

    @property
    def peak_above_start_bytes(self):
        """How far the block pushed allocation above where it started."""
        return self.peak_bytes - self.start_bytes


@contextlib.contextmanager
def track_memory(name, device=None, report=True, file=None):
    """Measures the peak allocated memory of a ``with`` block and prints it (``report=False`` to stay quiet).

    It resets the device's peak statistics on entry (so ``torch.cuda.max_memory_allocated()`` afterwards
    reflects this block only). Yields a ``MemoryBlock`` filled in when the block ends, even on an exception.
    """
    torch = _torch()
    problem = device_problem(torch, device)
    live = problem is None and _cuda_live(torch)
    index = _index(torch, device) if live else 0
    block = MemoryBlock(name, index)
    if live:
        torch.cuda.reset_peak_memory_stats(index)
        block.start_bytes = int(torch.cuda.memory_allocated(index))
    try:
        yield block
    finally:
        if problem is None and _cuda_live(torch):
            block.end_bytes = int(torch.cuda.memory_allocated(index))
            block.peak_bytes = int(torch.cuda.max_memory_allocated(index))
        if report and problem is not None:
            print("[gpumem] %s: no CUDA device: %s" % (name, problem), file=file or sys.stdout)
        elif report:
            print("[gpumem] %s: peak %s (+%s above start), net %s" % (
                name, format_bytes(block.peak_bytes), format_bytes(block.peak_above_start_bytes),
                format_bytes(block.delta_bytes)), file=file or sys.stdout)
