"""What happens at the moment of an allocator OOM: statistics at that instant and an optional snapshot."""
import os
import pickle

from ._config import MAX_SNAPSHOTS_PER_PROCESS
from ._stats import device_stats


def enable_history(torch, style, max_entries):
    """Switches allocation-history recording on in the form this torch understands, bounded where it can be."""
    record = torch.cuda.memory._record_memory_history
    if style == "max_entries":
        # Python stacks only: C++ symbolisation ("all") is slow enough to stall a training step.
        record(enabled="all", context="all", stacks="python", max_entries=max_entries)
    elif style == "trace_alloc":
        record(True, record_context=True, trace_alloc_max_entries=max_entries, trace_alloc_record_context=True)
    elif style == "enabled_only":
        record(True)


def write_snapshot(torch, directory, pid, index):
    """Writes ``torch.cuda.memory._snapshot()`` as a pickle into ``directory``; returns the path.

    Protocol 4 is pinned because PyTorch's own viewer cannot read protocol 5 (the Python 3.14 default).
    The file appears under its final name only when complete (write to a temporary name, then rename).
    The temporary is created with O_EXCL|O_NOFOLLOW and mode 0600: a name that already exists, a symbolic
    link above all, is refused rather than written through (docs/output-files.md).
    """
    snapshot = torch.cuda.memory._snapshot()
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, "oom-snapshot-%d-%d.pickle" % (pid, index))
    partial = path + ".partial"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    with os.fdopen(os.open(partial, flags, 0o600), "wb") as handle:
        pickle.dump(snapshot, handle, protocol=4)
    os.replace(partial, path)
    return path


class OomRecorder:
    """Builds the ``oom`` message; owns the per-process snapshot budget."""

    def __init__(self, torch, config, pid):
        self.torch = torch
        self.config = config
        self.pid = pid
        self.snapshots_written = 0

    def capture(self, device, requested_bytes, limit_bytes, free_bytes, source):
        """Returns the oom message for ``device``; never raises (problems land in the message)."""
        message = {
            "type": "oom",
            "source": source,
            "device": int(device),
            "requestedBytes": None if requested_bytes is None else int(requested_bytes),
            "deviceLimitBytes": None if limit_bytes is None else int(limit_bytes),
            "deviceFreeBytes": None if free_bytes is None else int(free_bytes),
            "stats": None,
            "snapshotPath": None,
            "snapshotError": None,
        }
        try:
            message["stats"] = device_stats(self.torch, device)
        except Exception as exc:
            message["snapshotError"] = "statistics unavailable: %s" % exc
        directory = self.config.snapshot_dir
        if directory and source == "observer":
            if self.snapshots_written >= MAX_SNAPSHOTS_PER_PROCESS:
                message["snapshotError"] = "snapshot limit of %d per process reached" % MAX_SNAPSHOTS_PER_PROCESS
            else:
                try:
                    self.snapshots_written += 1
                    message["snapshotPath"] = write_snapshot(
                        self.torch, directory, self.pid, self.snapshots_written)
                except Exception as exc:
                    message["snapshotError"] = "%s: %s" % (type(exc).__name__, exc)
        return message
