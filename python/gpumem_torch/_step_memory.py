"""Per-step memory of the training loop: each step's peak and what it left behind, for the OOM forecast.

At every step boundary (``optimizer.step()`` returning when torch has global optimizer hooks, else the next
DataLoader fetch) the allocator's counters of the current device are read once — allocated (what the step left
behind), reserved, and the peaks of allocated and reserved since the previous boundary — and the peaks are
reset, so the next step's peak is its own. Only host-side counters are read: no CUDA call, no synchronisation.
Records go out with the step message, at most once a second, as ``memory`` messages (docs/companion.md).

Resetting the peaks must not change what the program itself reads: ``torch.cuda.max_memory_allocated()``,
``memory_stats()`` and ``memory_summary()`` still give the peaks since the program's own last reset (or its start).
Each peak a boundary resets is kept (``KeptPeaks``) and merged back into the readers those functions share —
``torch.cuda.memory.memory_stats_as_nested_dict`` on real torch, else ``torch.cuda.memory_stats`` and the two
``max_memory_*`` functions — and the program's ``reset_peak_memory_stats`` clears what was kept for its device.
``GPUMEM_COMPANION_STEP_MEMORY=0`` turns the recording (and the reset) off.
"""
# Records held between two flushes; a loop faster than this many steps a second loses the surplus (counted).
MAX_PENDING = 20000
# Records per message: keeps a line well under the supervisor's 128 KiB line limit.
ROWS_PER_MESSAGE = 1500


def _nested_peaks(stats, out, path=()):
    """Every peak of a nested stats dict, by its key path."""
    for key, value in stats.items():
        if isinstance(value, dict):
            _nested_peaks(value, out, path + (key,))
        elif key == "peak":
            out[path + (key,)] = value
    return out


def _nested_reader(torch):
    """The cheapest reader torch offers: the C++ nested dict (no flattening of ~100 keys), else ``memory_stats``.
    Returns read(device) → (allocated, peak allocated, reserved, peak reserved, every peak by key), and reset."""
    raw = getattr(getattr(torch, "_C", None), "_cuda_memoryStats", None)
    reset_raw = getattr(getattr(torch, "_C", None), "_cuda_resetPeakMemoryStats", None)
    if callable(raw) and callable(reset_raw):
        def read(device):
            s = raw(device)
            a, r = s["allocated_bytes"]["all"], s["reserved_bytes"]["all"]
            return a["current"], a["peak"], r["current"], r["peak"], _nested_peaks(s, {})
        return read, reset_raw

    # Bound now: once KeptPeaks wraps memory_stats, a step's own peak must still be read unmerged.
    stats = torch.cuda.memory_stats

    def read_flat(device):
        s = stats(device)
        return (s.get("allocated_bytes.all.current"), s.get("allocated_bytes.all.peak"),
                s.get("reserved_bytes.all.current"), s.get("reserved_bytes.all.peak"),
                {k: v for k, v in s.items() if k.endswith(".peak")})
    return read_flat, torch.cuda.reset_peak_memory_stats


class KeptPeaks:
    """The peaks step boundaries reset, per device, merged back into what the program reads (see the module)."""

    def __init__(self, torch):
        self.torch = torch
        self.kept = {}
        self.installed = False

    def keep(self, device, peaks):
        kept = self.kept.setdefault(device, {})
        for key, value in peaks.items():
            if isinstance(value, int) and value > kept.get(key, -1):
                kept[key] = value

    def _device(self, device):
        if device is None:
            return self.torch.cuda.current_device()
        if isinstance(device, int):
            return device
        index = getattr(device, "index", None)
        if index is not None:
            return index
        text = str(device)
        return int(text.split(":")[1]) if ":" in text else self.torch.cuda.current_device()

    def install(self):
        """Wraps the program's readers and resets, once; a torch without them is left as it is."""
        if self.installed:
            return
        self.installed = True
        try:
            self._wrap()
        except Exception:
            pass  # the readers stay torch's own: the program then sees per-step peaks, never an error

    def _wrap(self):
        cuda = self.torch.cuda
        memory = getattr(cuda, "memory", None)
        nested = getattr(memory, "memory_stats_as_nested_dict", None)
        if callable(nested):
            def merged_nested(device=None, _orig=nested):
                stats = _orig(device)
                for path, value in self.kept.get(self._device(device), {}).items():
                    node = stats
                    for key in path[:-1]:
                        node = node.get(key) if isinstance(node, dict) else None
                    if isinstance(node, dict) and isinstance(node.get("peak"), int) and value > node["peak"]:
                        node["peak"] = value
                return stats
            memory.memory_stats_as_nested_dict = merged_nested
            if getattr(cuda, "memory_stats_as_nested_dict", None) is nested:
                cuda.memory_stats_as_nested_dict = merged_nested
        elif callable(getattr(cuda, "memory_stats", None)):
            flat = cuda.memory_stats

            def merged_flat(device=None, _orig=flat):
                stats = dict(_orig(device))
                for key, value in self.kept.get(self._device(device), {}).items():
                    if key in stats and value > stats[key]:
                        stats[key] = value
                return stats
            cuda.memory_stats = merged_flat
            for name, key in (("max_memory_allocated", "allocated_bytes.all.peak"), ("max_memory_reserved", "reserved_bytes.all.peak")):
                if callable(getattr(cuda, name, None)):
                    setattr(cuda, name, lambda device=None, _key=key: merged_flat(device).get(_key, 0))
        for owner in (cuda, memory):
            reset = getattr(owner, "reset_peak_memory_stats", None) if owner is not None else None
            if callable(reset):
                def program_reset(device=None, _orig=reset):
                    self.kept.pop(self._device(device), None)
                    return _orig(device)
                setattr(owner, "reset_peak_memory_stats", program_reset)


class StepMemory:
    """Step memory records of one process; ``boundary`` at each step's end, ``messages`` to send them."""

    def __init__(self, torch, source):
        self.torch = torch
        # "optimizer" or "dataloader": the one boundary that counts, fixed at install so steps never mix.
        self.source = source
        self.read, self.reset = _nested_reader(torch)
        # The program's own readers keep the run's peaks although the boundaries reset them.
        self.peaks = KeptPeaks(torch)
        self.step = 0
        self.started = source == "optimizer"
        self.pending = []
        self.dropped = 0
        self.failed = False
        # What grows, from allocator snapshots at a few steps (_growth_sites.py); set while history is recorded.
        self.sites = None
        self.site_messages = []
        # In-process history for the trainer callbacks (_forecast.History); None unless one asked for it.
        self.history = None
        # Records for the channel; a callback without gpumem keeps only its history.
        self.keep_pending = True

    def boundary(self, source):
        """A step of kind ``source`` ended; records it when that is the counting boundary and CUDA is up."""
        if source != self.source or self.failed:
            return
        torch = self.torch
        if not torch.cuda.is_initialized():
            return
        try:
            device = torch.cuda.current_device()
            self.peaks.install()
            if not self.started:
                # The first DataLoader fetch starts step 1: set-up before it is no step's peak.
                self.started = True
                self.peaks.keep(device, self.read(device)[4])
                self.reset(device)
                return
            allocated, peak_allocated, reserved, peak_reserved, peaks = self.read(device)
            self.peaks.keep(device, peaks)
            self.reset(device)
        except Exception:
            self.failed = True  # once broken, stay out of the loop's way
            raise
        self.step += 1
        if self.sites is not None and self.sites.due(self.step):
            try:
                found = self.sites.check(self.step, device, allocated)
                if found is not None:
                    self.site_messages.append(found)
            except Exception:
                self.sites = None  # no snapshot this time, nor later; the step records go on
        if self.history is not None and device == self.history.device:
            self.history.add(self.step, allocated, peak_allocated, reserved, peak_reserved)
        if not self.keep_pending:
            return
        if len(self.pending) >= MAX_PENDING:
            self.dropped += 1
            return
        self.pending.append((self.step, device, allocated, peak_allocated, reserved, peak_reserved))

    def messages(self):
        """The pending records as ``memory`` messages, one per run of consecutive steps on one device; clears them."""
        out, self.site_messages = self.site_messages, []
        rows, self.pending = self.pending, []
        for row in rows:
            last = out[-1] if out and out[-1]["type"] == "memory" else None
            if last is None or last["device"] != row[1] or last["firstStep"] + len(last["leftBytes"]) != row[0] \
                    or len(last["leftBytes"]) >= ROWS_PER_MESSAGE:
                last = {"type": "memory", "device": int(row[1]), "boundary": self.source, "firstStep": row[0],
                        "leftBytes": [], "peakAllocatedBytes": [], "reservedBytes": [], "peakReservedBytes": [],
                        "dropped": self.dropped}
                out.append(last)
            last["leftBytes"].append(int(row[2]))
            last["peakAllocatedBytes"].append(int(row[3]))
            last["reservedBytes"].append(int(row[4]))
            last["peakReservedBytes"].append(int(row[5]))
        return out
