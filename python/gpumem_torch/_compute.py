"""GPU time of the forward pass, the backward pass and the optimizer step, measured with CUDA events.

Events are recorded on the current stream at the step's start (the step boundary), around ``Tensor.backward``
and around ``optimizer.step()`` (global optimizer step hooks, torch >= 2.0). Forward is the GPU time from the
step's start — or the previous backward's end, with gradient accumulation — to the backward's start, so it
includes the batch's host-to-device copy. Elapsed times are read only once ``query()`` says the later event
is done, at later step boundaries, so the companion never makes the host wait for the GPU. One step in
``EVERY_STEPS`` is timed: creating, recording and querying events costs a few microseconds each.
"""
import collections

from ._steps import optimizer_module

EVERY_STEPS = 5
MAX_PENDING = 64


class ComputeTimer:
    """Totals per phase over the timed steps; ``message()`` is the ``compute`` field of the ``steps`` message."""

    def __init__(self, cuda):
        self.cuda = cuda
        self.pending = collections.deque()
        self.timing = False
        self.last_mark = None
        self.optimizer_start = None
        self.totals = {"forward": [0.0, 0], "backward": [0.0, 0], "optimizer": [0.0, 0]}
        self.dropped = 0

    def _event(self):
        event = self.cuda.Event(enable_timing=True)
        event.record()
        return event

    def _pair(self, kind, start, end):
        if len(self.pending) >= MAX_PENDING:
            self.pending.popleft()
            self.dropped += 1
        self.pending.append((kind, start, end))

    def boundary(self, steps):
        """A step ended and the next begins: read what the GPU finished, and time this step if it is its turn."""
        # Steps bounded by optimizer.step() end inside its post-hooks, before this timer's own post-hook runs.
        self.optimizer_ended()
        self.drain()
        self.timing = steps % EVERY_STEPS == 0 and self.cuda.is_initialized()
        self.last_mark = self._event() if self.timing else None
        self.optimizer_start = None

    def backward_started(self):
        """Before ``Tensor.backward``: returns its start event (None when this step is not timed)."""
        if not self.timing:
            return None
        event = self._event()
        if self.last_mark is not None:
            self._pair("forward", self.last_mark, event)
        return event

    def backward_ended(self, started):
        if started is None or not self.timing:
            return
        event = self._event()
        self._pair("backward", started, event)
        self.last_mark = event  # the next micro-batch's forward starts here

    def optimizer_started(self):
        if self.timing:
            self.optimizer_start = self._event()

    def optimizer_ended(self):
        if self.timing and self.optimizer_start is not None:
            self._pair("optimizer", self.optimizer_start, self._event())
            self.optimizer_start = None

    def drain(self):
        """Adds every pair the GPU has finished, oldest first; stops at the first one still running."""
        while self.pending:
            kind, start, end = self.pending[0]
            if not end.query():
                break
            self.pending.popleft()
            total = self.totals[kind]
            total[0] += start.elapsed_time(end)
            total[1] += 1

    def message(self):
        self.drain()
        t = self.totals
        return {
            "forwardMs": round(t["forward"][0], 3), "forwardCount": t["forward"][1],
            "backwardMs": round(t["backward"][0], 3), "backwardCount": t["backward"][1],
            "optimizerMs": round(t["optimizer"][0], 3), "optimizerCount": t["optimizer"][1],
            "everySteps": EVERY_STEPS, "dropped": self.dropped,
        }


def install(torch, recorder, compiling=lambda: False):
    """Hooks ``Tensor.backward`` and the optimizer step for CUDA-event timing; returns the timer, or None when
    this torch lacks CUDA events or the global optimizer hooks."""
    cuda = getattr(torch, "cuda", None)
    optimizer = optimizer_module(torch)
    register_pre = getattr(optimizer, "register_optimizer_step_pre_hook", None)
    register_post = getattr(optimizer, "register_optimizer_step_post_hook", None)
    backward = getattr(torch.Tensor, "backward", None)
    if cuda is None or getattr(cuda, "Event", None) is None or register_pre is None or register_post is None or backward is None:
        return None
    timer = ComputeTimer(cuda)

    def timed_backward(self, *args, **kwargs):
        if compiling() or not timer.timing:
            return backward(self, *args, **kwargs)
        try:
            started = timer.backward_started()
        except Exception:
            started = None
        out = backward(self, *args, **kwargs)
        try:
            timer.backward_ended(started)
        except Exception:
            pass
        return out

    def guarded(fn):
        def hook(opt, args, kwargs):
            try:
                fn()
            except Exception:
                pass
        return hook

    timed_backward._gpumem_wrapped = True
    timed_backward.__wrapped__ = backward
    timed_backward.__doc__ = getattr(backward, "__doc__", None)
    torch.Tensor.backward = timed_backward
    register_pre(guarded(timer.optimizer_started))
    register_post(guarded(timer.optimizer_ended))
    recorder.compute = timer
    return timer
