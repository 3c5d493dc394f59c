"""Capability probing: what this torch build offers, found by looking, never by parsing version numbers.

Each probe is wrapped so that a torch build that lacks or breaks a feature yields ``None``/``False`` for it
instead of an exception; the caller then simply does without that feature.
"""
import inspect

# memory_stats() keys the companion reports, with the field name used in the message format.
STAT_KEYS = (
    ("allocatedBytes", "allocated_bytes.all.current"),
    ("reservedBytes", "reserved_bytes.all.current"),
    ("activeBytes", "active_bytes.all.current"),
    ("inactiveSplitBytes", "inactive_split_bytes.all.current"),
    ("requestedBytes", "requested_bytes.all.current"),
    ("peakAllocatedBytes", "allocated_bytes.all.peak"),
    ("peakReservedBytes", "reserved_bytes.all.peak"),
    ("peakActiveBytes", "active_bytes.all.peak"),
    ("numAllocRetries", "num_alloc_retries"),
    ("numOoms", "num_ooms"),
)


def _attr(obj, dotted):
    """Follows a dotted attribute path, returning None at the first missing link."""
    for name in dotted.split("."):
        try:
            obj = getattr(obj, name)
        except Exception:
            return None
    return obj


def oom_exception_types(torch):
    """The exception classes this torch raises for an allocator OOM, newest name first.

    ``torch.OutOfMemoryError`` exists from about 2.4 (``torch.cuda.OutOfMemoryError`` stays an alias);
    1.13 to 2.3 only have ``torch.cuda.OutOfMemoryError``. Older builds raise a plain RuntimeError, which
    callers recognise by its text instead.
    """
    found = []
    for dotted in ("OutOfMemoryError", "cuda.OutOfMemoryError"):
        cls = _attr(torch, dotted)
        if isinstance(cls, type) and issubclass(cls, BaseException) and cls not in found:
            found.append(cls)
    return tuple(found)


def history_style(torch):
    """How ``torch.cuda.memory._record_memory_history`` wants to be called, or None when it is absent.

    * ``"max_entries"``: 2.1+ ``(enabled="all", context=..., stacks=..., max_entries=N)``, a bounded ring.
    * ``"trace_alloc"``: 2.0 ``(enabled, record_context, trace_alloc_max_entries, trace_alloc_record_context)``.
    * ``"enabled_only"``: 1.13 ``(enabled, device=None)``; history lives on live blocks only, so it is bounded
      by the number of live allocations.
    """
    fn = _attr(torch, "cuda.memory._record_memory_history")
    if not callable(fn):
        return None
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return None
    if "max_entries" in params:
        return "max_entries"
    if "trace_alloc_max_entries" in params:
        return "trace_alloc"
    if "enabled" in params:
        return "enabled_only"
    return None


def probe(torch):
    """Returns a dict of capabilities of the imported ``torch`` module (all booleans or short strings)."""
    caps = {
        "memoryStats": callable(_attr(torch, "cuda.memory_stats")),
        "oomObserver": callable(_attr(torch, "_C._cuda_attach_out_of_memory_observer")),
        "lazyCall": callable(_attr(torch, "cuda._lazy_call")),
        "isInitialized": callable(_attr(torch, "cuda.is_initialized")),
        "memoryFraction": callable(_attr(torch, "cuda.set_per_process_memory_fraction")),
        "snapshot": callable(_attr(torch, "cuda.memory._snapshot")),
        "historyStyle": history_style(torch),
        "resetPeak": callable(_attr(torch, "cuda.reset_peak_memory_stats")),
        "ipcCollect": callable(_attr(torch, "cuda.ipc_collect")),
        "memGetInfo": callable(_attr(torch, "cuda.mem_get_info")),
        "oomError": _oom_error_name(torch),
    }
    return caps


def _oom_error_name(torch):
    types = oom_exception_types(torch)
    if not types:
        return None
    cls = types[0]
    return "torch.OutOfMemoryError" if cls is _attr(torch, "OutOfMemoryError") else "torch.cuda.OutOfMemoryError"


def is_oom_exception(torch, exc):
    """True when ``exc`` is an allocator OOM of this torch (by class, or by text on builds without the class)."""
    types = oom_exception_types(torch)
    if types and isinstance(exc, types):
        return True
    return isinstance(exc, RuntimeError) and "out of memory" in str(exc)[:200].lower()
