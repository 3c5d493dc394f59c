"""Per-step memory of the training loop: each step's peak and what it left behind, for the OOM forecast.

At every step boundary (``optimizer.step()`` returning when torch has global optimizer hooks, else the next
DataLoader fetch) the allocator's counters of the current device are read once — allocated (what the step left
behind), reserved, and the peaks of allocated and reserved since the previous boundary — and the peaks are
reset, so the next step's peak is its own. Only host-side counters are read: no CUDA call, no synchronisation.
Records go out with the step message, at most once a second, as ``memory`` messages (docs/companion.md).

Resetting the peaks means ``torch.cuda.max_memory_allocated()`` read inside the program gives the peak since
the current step began; the supervisor keeps the run's maximum from these records. ``GPUMEM_COMPANION_STEP_MEMORY=0``
turns the recording (and the reset) off.
"""
# Records held between two flushes; a loop faster than this many steps a second loses the surplus (counted).
MAX_PENDING = 20000
# Records per message: keeps a line well under the supervisor's 128 KiB line limit.
ROWS_PER_MESSAGE = 1500


def _nested_reader(torch):
    """The cheapest reader torch offers: the C++ nested dict (no flattening of ~100 keys), else ``memory_stats``."""
    raw = getattr(getattr(torch, "_C", None), "_cuda_memoryStats", None)
    reset_raw = getattr(getattr(torch, "_C", None), "_cuda_resetPeakMemoryStats", None)
    if callable(raw) and callable(reset_raw):
        def read(device):
            s = raw(device)
            a, r = s["allocated_bytes"]["all"], s["reserved_bytes"]["all"]
            return a["current"], a["peak"], r["current"], r["peak"]
        return read, reset_raw

    def read_flat(device):
        s = torch.cuda.memory_stats(device)
        return (s.get("allocated_bytes.all.current"), s.get("allocated_bytes.all.peak"),
                s.get("reserved_bytes.all.current"), s.get("reserved_bytes.all.peak"))
    return read_flat, torch.cuda.reset_peak_memory_stats


class StepMemory:
    """Step memory records of one process; ``boundary`` at each step's end, ``messages`` to send them."""

    def __init__(self, torch, source):
        self.torch = torch
        # "optimizer" or "dataloader": the one boundary that counts, fixed at install so steps never mix.
        self.source = source
        self.read, self.reset = _nested_reader(torch)
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
            if not self.started:
                # The first DataLoader fetch starts step 1: set-up before it is no step's peak.
                self.started = True
                self.reset(device)
                return
            allocated, peak_allocated, reserved, peak_reserved = self.read(device)
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
