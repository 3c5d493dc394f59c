"""Step timing without code changes: wraps the DataLoader iterator's ``__next__``.

A training step is the time between two successive batch fetches; the part of it spent inside ``__next__`` is
the time the loop waited for data. A loop that fetches no batch through a DataLoader has its steps bounded by
``optimizer.step()`` instead (a global optimizer step hook); its data wait is then unknown. Whichever boundary
is seen first is kept, so a validation DataLoader after such a loop does not mix its fetches in. The batch size
seen is the first dimension of the batch's first tensor. Totals are cumulative, so a lost message loses nothing; they are sent at most once a second and at exit.
"""
import sys
import time

from ._batch import _first_dim, _tokens, asked_batch, cpu_count, loader_settings

SEND_EVERY_S = 1.0


class StepRecorder:
    """Cumulative step figures; ``send`` is called with a ``steps`` message (docs/companion.md)."""

    def __init__(self, send, clock=time.perf_counter):
        self.send = send
        self.clock = clock
        self.asked = asked_batch()
        self.steps = 0
        self.wait_s = 0.0
        self.step_s = 0.0
        self.samples = 0
        self.tokens = None
        self.boundary = None
        self.sizes = {}
        self.last_end = None
        self.last_sent = clock()
        self.loader = None
        # The id, not the iterator: holding it would keep a finished loader's worker processes alive.
        self.iterator_id = None
        self.cpus = cpu_count()
        # Host-to-device copies and synchronising calls: the running step's (pending) and the completed steps'.
        self.copies = None
        self.pending_copies = [0, 0, 0.0, 0, 0, 0.0, 0]
        self.syncs = None
        self.pending_syncs = {}
        self.sync_steps = 0
        # CUDA-event timing of forward, backward and optimizer (_compute.py); None until installed.
        self.compute = None
        # Per-step peaks and what each step left behind (_step_memory.py); None until installed.
        self.memory = None
        self.optimizer_hooked = False

    def copied(self, nbytes, seconds, non_blocking, pinned):
        """A host-to-device copy of ``nbytes`` took ``seconds`` of the host; blocking unless pinned and non_blocking."""
        p = self.pending_copies
        p[0] += 1
        p[1] += nbytes
        p[2] += seconds
        if not (non_blocking and pinned):
            p[3] += 1
            p[4] += nbytes
            p[5] += seconds
        if not pinned:
            p[6] += nbytes

    def synced(self, kind, seconds):
        """A call of ``kind`` (item, cpu, tolist, synchronize) made the host wait ``seconds`` for the GPU."""
        entry = self.pending_syncs.get(kind)
        if entry is None:
            self.pending_syncs[kind] = [1, seconds]
        else:
            entry[0] += 1
            entry[1] += seconds

    def _commit_step(self):
        """The step that just ended keeps its copies and synchronising calls; the next one starts from zero."""
        p = self.pending_copies
        if p[0]:
            totals = self.copies = self.copies or [0, 0, 0.0, 0, 0, 0.0, 0]
            for i, v in enumerate(p):
                totals[i] += v
            self.pending_copies = [0, 0, 0.0, 0, 0, 0.0, 0]
        if self.pending_syncs:
            self.sync_steps += 1
            totals = self.syncs = self.syncs or {}
            for kind, (n, s) in self.pending_syncs.items():
                t = totals.setdefault(kind, [0, 0.0])
                t[0] += n
                t[1] += s
            self.pending_syncs = {}

    def _compute_boundary(self):
        if self.compute is not None:
            try:
                self.compute.boundary(self.steps)
            except Exception:
                self.compute = None  # CUDA events failed once: stop timing rather than fail every step

    def _memory_boundary(self, source):
        if self.memory is not None:
            try:
                self.memory.boundary(source)
            except Exception:
                self.memory = None  # the counters failed once: the loop runs on without step memory

    def _discard_pending(self):
        # Before the first batch: model loading and set-up are not part of any step.
        self.pending_copies = [0, 0, 0.0, 0, 0, 0.0, 0]
        self.pending_syncs = {}

    def optimizer_stepped(self, ended):
        """``optimizer.step()`` returned at ``ended``: a step boundary for loops without a DataLoader."""
        self._memory_boundary("optimizer")
        if self.boundary == "dataloader":
            return
        self.boundary = "optimizer"
        if self.last_end is not None:
            self.steps += 1
            self.step_s += ended - self.last_end
            self._commit_step()
        else:
            self._discard_pending()
        self.last_end = ended
        self._compute_boundary()
        if ended - self.last_sent >= SEND_EVERY_S:
            self.flush()

    def fetched(self, started, ended, batch, iterator=None):
        """One ``__next__`` returned ``batch``: it waited ``ended - started``; the step ran since the last fetch."""
        self._memory_boundary("dataloader")
        if self.boundary == "optimizer":
            return
        self.boundary = "dataloader"
        if iterator is not None and id(iterator) != self.iterator_id:
            self.iterator_id = id(iterator)
            self.loader = loader_settings(iterator)
        if self.last_end is not None:
            self.steps += 1
            self.step_s += started - self.last_end + (ended - started)
            self.wait_s += ended - started
            self._commit_step()
        else:
            self._discard_pending()
        self.last_end = ended
        self._compute_boundary()
        tokens = _tokens(batch)
        if tokens is not None:
            self.tokens = (self.tokens or 0) + tokens
        size = _first_dim(batch)
        if size is not None:
            self.samples += size
            if len(self.sizes) < 32 or size in self.sizes:
                self.sizes[size] = self.sizes.get(size, 0) + 1
        if ended - self.last_sent >= SEND_EVERY_S:
            self.flush()

    def message(self):
        seen = max(self.sizes.items(), key=lambda kv: kv[1])[0] if self.sizes else None
        return {
            "type": "steps",
            "steps": self.steps,
            "dataWaitMs": round(self.wait_s * 1000, 3),
            "stepMs": round(self.step_s * 1000, 3),
            "samples": self.samples,
            "tokens": self.tokens,
            "batchSeen": seen,
            "batchMin": min(self.sizes) if self.sizes else None,
            "batchMax": max(self.sizes) if self.sizes else None,
            "batchAsked": self.asked,
            "boundary": self.boundary,
            "loader": self.loader,
            "cpuCount": self.cpus,
            "copies": self._copies_message(),
            "syncs": self._syncs_message(),
            "compute": self._compute_message(),
        }

    def _compute_message(self):
        # Reading events can fail late (CUDA torn down at exit); the step figures must still go out.
        try:
            return self.compute.message() if self.compute is not None else None
        except Exception:
            return None

    def _copies_message(self):
        c = self.copies or [0, 0, 0.0, 0, 0, 0.0, 0]
        return {"count": c[0], "bytes": c[1], "ms": round(c[2] * 1000, 3), "blockingCount": c[3], "blockingBytes": c[4],
                "blockingMs": round(c[5] * 1000, 3), "pageableBytes": c[6]}

    def _syncs_message(self):
        kinds = {kind: {"count": n, "ms": round(s * 1000, 3)} for kind, (n, s) in (self.syncs or {}).items()}
        return {"steps": self.sync_steps, "byKind": kinds}

    def flush(self):
        self.last_sent = self.clock()
        if self.steps > 0 or self.sizes:
            self.send(self.message())
        if self.memory is not None:
            for message in self.memory.messages():
                self.send(message)


def wrap_iterator_class(cls, recorder, clock=time.perf_counter):
    """Replaces ``cls.__next__`` with a timed one; the batch and any exception pass through untouched."""
    original = cls.__next__
    if getattr(original, "_gpumem_wrapped", False):
        return

    def __next__(self):
        started = clock()
        batch = original(self)
        try:
            recorder.fetched(started, clock(), batch, self)
        except Exception:
            pass
        return batch

    __next__._gpumem_wrapped = True
    cls.__next__ = __next__


def optimizer_module(torch):
    """``torch.optim.optimizer``, where the global optimizer step hooks live, or None.

    Recent torch deletes the name ``optimizer`` from ``torch.optim`` after importing it, so the attribute alone
    misses it there; the module itself stays in ``sys.modules``.
    """
    found = getattr(getattr(torch, "optim", None), "optimizer", None)
    if found is None:
        found = sys.modules.get("%s.optim.optimizer" % getattr(torch, "__name__", "torch"))
    return found


def hook_optimizer(torch, recorder, clock=time.perf_counter):
    """Registers a global optimizer step post-hook (torch ≥ 2.0) that marks step boundaries; False when absent."""
    optimizer = optimizer_module(torch)
    register = getattr(optimizer, "register_optimizer_step_post_hook", None)
    if register is None:
        return False

    def stepped(opt, args, kwargs):
        try:
            recorder.optimizer_stepped(clock())
        except Exception:
            pass

    register(stepped)
    return True


def install(torch, send):
    """Wraps torch's DataLoader iterators and hooks optimizer steps; returns the recorder, or None when this torch has neither."""
    try:
        from torch.utils.data import dataloader  # noqa: imported lazily: only programs that use it pay
    except Exception:
        dataloader = getattr(getattr(getattr(torch, "utils", None), "data", None), "dataloader", None)
    cls = getattr(dataloader, "_BaseDataLoaderIter", None) if dataloader is not None else None
    recorder = StepRecorder(send)
    if cls is not None:
        wrap_iterator_class(cls, recorder)
    try:
        hooked = hook_optimizer(torch, recorder)
    except Exception:
        hooked = False  # the DataLoader timing stands on its own
    recorder.optimizer_hooked = hooked
    if not hooked and cls is None:
        return None
    return recorder
