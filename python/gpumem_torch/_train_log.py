"""What the trainer callbacks log each step, whatever the trainer: allocated, reserved, the step's peaks, the
step and data-wait times and the OOM forecast, read from the same per-step records as ``gpumem run`` (the
companion's, when gpumem supervises the run; otherwise this process's own), and at an OOM the allocator's
numbers, the forecast and a snapshot written into the run's log folder.
"""
import json
import os
import time

from ._forecast import History, forecast
from ._format import format_bytes as _gib
from ._oom import write_snapshot
from ._step_memory import StepMemory
from ._steps import install as install_steps

PREFIX = "gpumem/"
_own_steps = None  # this process's step recorder when no companion runs (DataLoader waits; installed once)


def _companion_steps():
    from ._companion import active
    companion = active()
    return getattr(companion, "steps", None) if companion else None


class TrainingMemoryLog:
    """Per-step figures for a trainer's logger; ``step_ended`` after each optimizer step, ``metrics`` to log."""

    def __init__(self, torch, within_steps=1000, check_spikes=True, clock=time.perf_counter):
        global _own_steps
        self.torch = torch
        self.within_steps = within_steps
        self.check_spikes = check_spikes
        self.clock = clock
        self.recorder = _companion_steps()
        self.own = self.recorder is None or self.recorder.memory is None
        if self.own:
            self.memory = StepMemory(torch, "optimizer")
            self.memory.keep_pending = False
            if self.recorder is None:
                if _own_steps is None:
                    _own_steps = install_steps(torch, lambda message: None)
                self.recorder = _own_steps
        else:
            self.memory = self.recorder.memory
        self.memory.history = History(0, "optimizer")
        self.last_end = None
        self.step_ms = None
        self.last_wait_s = self.recorder.wait_s if self.recorder is not None else None
        self.data_wait_ms = None
        self.ooms = 0
        self.log_dir = None
        self.observing = False

    def step_ended(self):
        """The trainer finished an optimizer step: read its memory (unless the companion did) and its times."""
        h = self.memory.history
        if h.last_step == 0 and self.torch.cuda.is_initialized():
            # The device the program trains on, fixed at its first step.
            h.device = self.torch.cuda.current_device()
        if self.own:
            self.memory.boundary("optimizer")
        now = self.clock()
        first = self.last_end is None
        self.step_ms = None if first else (now - self.last_end) * 1000
        self.last_end = now
        r = self.recorder
        if r is not None and r.boundary == "dataloader":
            waited_ms = (r.wait_s - (self.last_wait_s or 0.0)) * 1000
            self.last_wait_s = r.wait_s
            # The recorder counts from one fetch to the next, so the first step's own fetch is in no step: its
            # wait is unknown, not zero.
            self.data_wait_ms = None if first else waited_ms
        else:
            self.data_wait_ms = None

    def limit(self):
        """What PyTorch here can reach: reserved plus the device's free bytes (one driver query, at logging time only)."""
        if not self.torch.cuda.is_initialized():
            return None
        device = self.memory.history.device
        free, total = self.torch.cuda.mem_get_info(device)
        limit = int(self.torch.cuda.memory_reserved(device)) + int(free)
        from ._companion import active
        fraction = getattr(getattr(active(), "config", None), "memory_fraction", None)
        # gpumem's --memory-fraction caps PyTorch below the device (torch has no getter for a fraction set otherwise).
        return min(limit, int(fraction * total)) if fraction else limit

    def forecast(self):
        try:
            limit = self.limit()
        except Exception:
            limit = None
        return forecast(self.memory.history, limit, self.within_steps, self.check_spikes)

    def metrics(self, global_step=None):
        """The latest step's figures under ``gpumem/`` names; only what is known (nothing without CUDA but times).
        ``global_step``: the trainer's count of optimizer steps now, so the forecast's step numbers are the
        trainer's own after a resumed run (this process counts its steps from 1)."""
        out = {}
        h = self.memory.history
        shift = global_step - h.last_step if global_step is not None and h.last_step else 0
        if h.recent:
            _, left, peak_allocated, reserved, peak_reserved = h.recent[-1]
            out.update({"allocated_bytes": left, "reserved_bytes": reserved, "step_peak_allocated_bytes": peak_allocated,
                        "step_peak_reserved_bytes": peak_reserved})
            f = self.forecast()
            g, s = f["growth"], f["spikes"]
            if g is not None:
                out["forecast_growth_bytes_per_step"] = g["bytesPerStep"]
                if g["oomAtStep"] is not None:
                    out["forecast_oom_step"] = g["oomAtStep"] + shift
            if s is not None:
                out["forecast_next_spike_step"] = s["nextStep"] + shift
                out["forecast_next_spike_bytes"] = s["nextPeakBytes"]
                if s["headroomBytes"] is not None:
                    out["forecast_next_spike_headroom_bytes"] = s["headroomBytes"]
            out["forecast_warning"] = len(f["warnings"])
        if self.step_ms is not None:
            out["step_ms"] = self.step_ms
        if self.data_wait_ms is not None:
            out["data_wait_ms"] = self.data_wait_ms
        return {PREFIX + k: v for k, v in out.items()}

    # -- OOM -----------------------------------------------------------------------------------------------

    def watch_ooms(self, log_dir):
        """At an OOM, write what the allocator saw, the forecast and (with history recorded) a snapshot into ``log_dir``."""
        self.log_dir = log_dir
        attach = getattr(getattr(self.torch, "_C", None), "_cuda_attach_out_of_memory_observer", None)
        if attach is None or self.observing:
            return False
        attach(self._on_oom)
        self.observing = True
        return True

    def _on_oom(self, device, alloc, device_allocated, device_free):
        # Called inside the allocator: never raise into the allocation path.
        try:
            self.write_oom(device, alloc, device_allocated, device_free)
        except Exception:
            pass

    def write_oom(self, device, requested, limit, free):
        """Writes ``gpumem-oom-PID-N.json`` (and the snapshot beside it); returns the JSON file's path."""
        if self.log_dir is None:
            return None
        self.ooms += 1
        pid = os.getpid()
        os.makedirs(self.log_dir, exist_ok=True)
        stats = self.torch.cuda.memory_stats(device)
        allocated, reserved = stats.get("allocated_bytes.all.current"), stats.get("reserved_bytes.all.current")
        h = self.memory.history
        record = {
            "schemaVersion": 1, "pid": pid, "device": int(device), "step": h.last_step + 1,
            "requestedBytes": requested, "deviceLimitBytes": limit, "deviceFreeBytes": free,
            "allocatedBytes": allocated, "reservedBytes": reserved,
            "forecast": forecast(h, None if limit is None else int(limit)), "snapshotPath": None, "snapshotError": None,
        }
        try:
            record["snapshotPath"] = write_snapshot(self.torch, self.log_dir, pid, self.ooms)
        except Exception as exc:
            record["snapshotError"] = "%s: %s" % (type(exc).__name__, exc)
        record["explanation"] = explain(record)
        path = os.path.join(self.log_dir, "gpumem-oom-%d-%d.json" % (pid, self.ooms))
        with open(path, "w") as handle:
            json.dump(record, handle, indent=1)
        return path


def explain(r):
    """One paragraph: what failed, how memory stood, and what the step history says about why."""
    text = ("CUDA out of memory on cuda:%d during step %d: tried to allocate %s with %s allocated and %s reserved by "
            "PyTorch, %s free on the device." % (r["device"], r["step"], _gib(r["requestedBytes"]), _gib(r["allocatedBytes"]),
                                                   _gib(r["reservedBytes"]), _gib(r["deviceFreeBytes"])))
    f = r["forecast"]
    if f and f["growth"]:
        text += (" Each step left %s more allocated than the one before since step %d: a tensor is kept across "
                 "steps (e.g. `total += loss` instead of `loss.item()`)." % (_gib(f["growth"]["bytesPerStep"]), f["growth"]["sinceStep"]))
    elif f and f["spikes"] and f["spikes"]["nextStep"] == r["step"]:
        text += (" A spike comes back every %d steps (an evaluation or a checkpoint) and peaked at %s before; this is "
                 "its step." % (f["spikes"]["everySteps"], _gib(f["spikes"]["peakBytes"])))
    elif f:
        text += " Steps before it were flat (usual peak %s): the batch or the model is too large." % _gib(f["usualPeakBytes"])
    if r["snapshotPath"]:
        text += " Snapshot: %s (read it with `gpumem snapshot %s`)." % (r["snapshotPath"], r["snapshotPath"])
    return text
