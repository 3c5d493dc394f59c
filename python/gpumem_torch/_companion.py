"""The zero-code companion: activated right after ``import torch`` in a program started by ``gpumem run``.

It streams allocator statistics to the supervisor, reports OOMs at the instant they happen, and applies the
memory fraction before the first allocation. Every hook is guarded: if anything fails, the program runs
exactly as it would without gpumem, and the failure is reported once.
"""
import atexit
import os
import sys
import threading
import time

from ._channel import Channel
from ._config import SCHEMA_VERSION, Config
from ._cuda import late_problem, static_status
from ._oom import OomRecorder, enable_history
from ._probe import is_oom_exception, probe
from ._rank import RankReporter
from ._stats import all_device_stats, cuda_ready, device_identities
from ._steps import install as install_steps
from ._transfers import compiling_probe, install as install_transfers
from ._compute import install as install_compute
from ._step_memory import StepMemory
from ._growth_sites import SiteTracker

COMPANION_VERSION = "0.1.0"
# Unchanged statistics are still re-sent this often, so the supervisor can tell "quiet" from "gone".
HEARTBEAT_S = 1.0

_active = None


def _now_ms():
    return int(time.time() * 1000)


class Companion:
    """One process's companion: the channel, the sampler thread and the hooks into torch."""

    def __init__(self, torch, config, channel):
        self.torch = torch
        self.config = config
        self.channel = channel
        self.pid = os.getpid()
        self.caps = probe(torch)
        self.cuda = static_status(torch)
        self.reported = set()
        self.seq = 0
        self.stop = threading.Event()
        self.thread = None
        self.identities_sent = False
        self.last_ooms = {}
        self.oom = OomRecorder(torch, config, self.pid)
        self.observer_attached = False
        self.steps = None
        self.ranks = None

    # -- sending -----------------------------------------------------------------------------------------

    def send(self, message):
        """Stamps and sends one message; a broken channel is reported once and then ignored."""
        message["schemaVersion"] = SCHEMA_VERSION
        message["pid"] = self.pid
        message["timeMs"] = _now_ms()
        try:
            self.channel.send(message)
        except Exception as exc:
            self.channel.closed = True
            self.report("channel", exc, via_channel=False)

    def report(self, what, exc, via_channel=True):
        """Reports a failed feature once: on the channel when it works, otherwise one line on stderr."""
        if what in self.reported:
            return
        self.reported.add(what)
        text = exc if isinstance(exc, str) else "%s: %s" % (type(exc).__name__, exc)
        if via_channel and not self.channel.closed:
            self.send({"type": "error", "what": what, "message": text})
        else:
            try:
                sys.stderr.write("gpumem companion: %s failed (%s); the program continues without it\n" % (what, text))
            except Exception:
                pass

    # -- start -------------------------------------------------------------------------------------------

    def start(self):
        """Says hello, installs the hooks and starts the sampler; each step guarded on its own."""
        self.send({
            "type": "hello",
            "ppid": os.getppid(),
            "companionVersion": COMPANION_VERSION,
            "torchVersion": str(getattr(self.torch, "__version__", "unknown")),
            "pythonVersion": "%d.%d.%d" % sys.version_info[:3],
            "capabilities": self.caps,
            "config": self.config.as_message(),
            "cuda": self.cuda,
        })
        for what, text in self.config.problems:
            self.report(what, text)
        self._guard("exit hook", lambda: atexit.register(self.finish))
        self._guard("fork hook", lambda: os.register_at_fork(after_in_child=self._forked))
        self._guard("exception hook", self._install_excepthook)
        self._guard("rank", self._install_ranks)
        self._guard("step timing", self._install_steps)
        self._guard("copy timing", self._install_transfers)
        if self.cuda["problem"] is not None:
            # The hello already says why; nothing CUDA-side can be applied or sampled in this process.
            return
        self._guard("compute timing", self._install_compute)
        self._guard("step memory", self._install_step_memory)
        self._guard("cuda setup", self._schedule_cuda_setup)
        if self.config.rate_hz and self.config.rate_hz > 0:
            self._guard("sampler", self._start_sampler)

    def _install_ranks(self):
        self.ranks = RankReporter(self.torch, self.send)
        self.ranks.wrap_init()
        self.ranks.start()

    def _install_steps(self):
        self.steps = install_steps(self.torch, self.send)

    def _install_transfers(self):
        # Apart from step timing, so a failure here costs only the copy and synchronisation figures.
        if self.steps is not None:
            install_transfers(self.torch, self.steps)

    def _install_compute(self):
        if self.steps is not None:
            install_compute(self.torch, self.steps, compiling_probe(self.torch))

    def _install_step_memory(self):
        if self.steps is not None and self.config.step_memory:
            self.steps.memory = StepMemory(self.torch, "optimizer" if self.steps.optimizer_hooked else "dataloader")

    def _guard(self, what, fn):
        try:
            fn()
        except Exception as exc:
            self.report(what, exc)

    def _schedule_cuda_setup(self):
        needs_setup = self.config.memory_fraction is not None or self.config.snapshot_dir or self.caps["oomObserver"]
        if not needs_setup:
            return
        if not self.caps["lazyCall"]:
            raise RuntimeError("torch.cuda._lazy_call is missing, so nothing can run at CUDA initialisation")
        # Queued to run inside torch's own lazy CUDA initialisation: before the first allocation, and
        # without initialising CUDA ourselves (which would break programs that fork after import).
        self.torch.cuda._lazy_call(self._on_cuda_init)

    def _on_cuda_init(self):
        # Runs inside torch's initialisation: an exception escaping here would fail the user's first CUDA call.
        torch = self.torch
        if self.config.memory_fraction is not None:
            if self.caps["memoryFraction"]:
                try:
                    for d in range(torch.cuda.device_count()):
                        torch.cuda.set_per_process_memory_fraction(self.config.memory_fraction, d)
                except Exception as exc:
                    self.report("memory fraction", exc)
            else:
                self.report("memory fraction", "torch.cuda.set_per_process_memory_fraction is missing")
        if self.config.snapshot_dir:
            try:
                if self.caps["historyStyle"] is None or not self.caps["snapshot"]:
                    raise RuntimeError("this torch cannot record allocation history")
                enable_history(torch, self.caps["historyStyle"], self.config.snapshot_max_entries)
                if self.steps is not None and self.steps.memory is not None:
                    self.steps.memory.sites = SiteTracker(torch)
            except Exception as exc:
                self.report("memory history", exc)
        if self.caps["oomObserver"]:
            try:
                torch._C._cuda_attach_out_of_memory_observer(self._on_oom)
                self.observer_attached = True
            except Exception as exc:
                self.report("oom observer", exc)

    # -- OOM ---------------------------------------------------------------------------------------------

    def _on_oom(self, device, alloc, limit, free):
        # Called by the allocator with its lock released; must never raise into the allocation path.
        try:
            message = self.oom.capture(device, alloc, limit, free, "observer")
            self.last_ooms[int(device)] = (message.get("stats") or {}).get("numOoms")
            self.send(message)
        except Exception as exc:
            self.report("oom observer", exc)

    def _install_excepthook(self):
        previous = sys.excepthook

        def hook(exc_type, exc, tb):
            try:
                if self.channel is not None and is_oom_exception(self.torch, exc):
                    self.send({"type": "exception", "oom": True, "exceptionType": exc_type.__name__,
                               "message": str(exc)[:8000]})
            except Exception:
                pass
            previous(exc_type, exc, tb)

        sys.excepthook = hook

    # -- sampling ----------------------------------------------------------------------------------------

    def _start_sampler(self):
        self.thread = threading.Thread(target=self._sample_loop, name="gpumem-companion", daemon=True)
        self.thread.start()

    def sample(self, force=False, last=None):
        """Sends one stats message when something changed (or ``force``); returns the devices sent."""
        devices = all_device_stats(self.torch)
        if devices and not self.identities_sent:
            self.identities_sent = True
            self.send({"type": "devices", "devices": device_identities(self.torch)})
        if not self.observer_attached:
            self._oom_from_counters(devices)
        if devices and (force or devices != last):
            self.seq += 1
            self.send({"type": "stats", "seq": self.seq, "devices": devices})
        return devices

    def _oom_from_counters(self, devices):
        # Without the observer hook (torch < 2.0) an OOM shows up as a rising num_ooms counter instead.
        for entry in devices:
            count = entry.get("numOoms")
            seen = self.last_ooms.get(entry["device"], 0)
            if count is not None and count > (seen or 0):
                self.last_ooms[entry["device"]] = count
                self.send(self.oom.capture(entry["device"], None, None, None, "counter"))

    def _sample_loop(self):
        interval = 1.0 / self.config.rate_hz
        last, last_sent = None, 0.0
        while not self.stop.wait(interval):
            try:
                if not cuda_ready(self.torch):
                    continue
                now = time.monotonic()
                force = now - last_sent >= HEARTBEAT_S
                devices = self.sample(force=force, last=last)
                if force or devices != last:
                    last_sent = now
                last = devices
            except Exception as exc:
                self.report("statistics", exc)
                return

    # -- end ---------------------------------------------------------------------------------------------

    def finish(self):
        """At interpreter exit: final statistics (with peaks), then bye, then close the channel."""
        self.stop.set()
        try:
            if cuda_ready(self.torch):
                self.sample(force=True)
            elif self.cuda["problem"] is None:
                # CUDA never came up: only now, with the program ending, is asking torch why free of side effects.
                problem = late_problem(self.torch)
                if problem is not None:
                    self.send({"type": "cuda", "problem": problem})
        except Exception as exc:
            self.report("statistics", exc)
        if self.steps is not None:
            self._guard("step timing", self.steps.flush)
        if self.ranks is not None:
            # A group made without init_process_group (or before the wrap) is still named at exit.
            self._guard("rank", self.ranks.check)
        self.send({"type": "bye", "dropped": self.channel.dropped})
        self.channel.close()

    def _forked(self):
        # A forked child shares the parent's socket; it must not write on it, and its sampler thread is gone.
        self.stop.set()
        self.channel.abandon()


def activate(torch):
    """Starts the companion for this process if gpumem asked for it; idempotent; never raises."""
    global _active
    if _active is not None:
        return _active
    config = Config()
    if not config.channel:
        return None
    try:
        channel = Channel(config.channel)
    except Exception as exc:
        try:
            sys.stderr.write("gpumem companion: cannot reach gpumem at %s (%s); the program continues without it\n"
                             % (config.channel, exc))
        except Exception:
            pass
        _active = False
        return None
    _active = Companion(torch, config, channel)
    try:
        _active.start()
    except Exception as exc:
        _active.report("start", exc)
    return _active


def active():
    """The running companion, or None."""
    return _active or None
