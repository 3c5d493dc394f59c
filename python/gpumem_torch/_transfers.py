"""Host-to-device copies and synchronising calls, timed inside the training loop without code changes.

``Tensor.to`` and ``Tensor.cuda`` are wrapped: a call whose source is on the CPU and whose result is on a CUDA
device is a host-to-device copy; its wall time is measured, and it is *blocking* when the source is pageable
(not pinned) or ``non_blocking`` was not asked for — the host then waits for the transfer. ``Tensor.item``,
``.cpu``, ``.tolist``, ``.to`` to the CPU on a CUDA tensor, and ``torch.cuda.synchronize`` make the host wait
for every queued kernel: they are counted per step with the time spent waiting.

Cheap by construction: before the loop's first batch (model loading) and for calls that cannot be either kind
(a CUDA tensor's dtype change, a CPU tensor's ``.item()``) the wrapper adds one flag test and one attribute
read. Under ``torch.compile`` tracing the original method is called untouched (that test comes first, so the
tracer does not trace the recorder's changing state).
"""
import sys
import time


def _non_blocking_to(args, kwargs):
    """``non_blocking`` of a ``Tensor.to`` call: keyword, or positional after (device, dtype) or after (other)."""
    if "non_blocking" in kwargs:
        return bool(kwargs["non_blocking"])
    position = 1 if args and hasattr(args[0], "shape") else 2
    return len(args) > position and args[position] is True


def _nbytes(t):
    n = getattr(t, "nbytes", None)
    if isinstance(n, int):
        return n
    try:
        return int(t.numel()) * int(t.element_size())
    except Exception:
        return 0


def _pinned(t):
    try:
        return bool(t.is_pinned())
    except Exception:
        return False


def compiling_probe(torch):
    """``torch.compiler.is_compiling`` (torch >= 2.1), or dynamo's own when dynamo is already imported (never
    imported here: that takes a second), else a function that says False."""
    for owner in (getattr(torch, "compiler", None), sys.modules.get("torch._dynamo.external_utils"), sys.modules.get("torch._dynamo")):
        probe = getattr(owner, "is_compiling", None)
        if callable(probe):
            return probe
    return lambda: False


def wrap_tensor_class(cls, recorder, clock=time.perf_counter, compiling=lambda: False, dtype=None):
    """Replaces ``to``, ``cuda``, ``item``, ``cpu`` and ``tolist`` of ``cls`` with timed ones; results and errors pass through.

    ``dtype`` is torch's dtype class: ``.to(torch.float16, …)`` and ``.to(dtype=…)`` never change the device, and
    models call them many times per step, so they go straight to the original before anything else.
    """
    if getattr(getattr(cls, "to", None), "_gpumem_wrapped", False):
        return

    def wrap_to(original):
        def to(self, *args, **kwargs):
            if (args[0].__class__ is dtype if args else "device" not in kwargs) or compiling() or recorder.last_end is None:
                return original(self, *args, **kwargs)
            started = clock()
            out = original(self, *args, **kwargs)
            if out is not self:
                try:
                    if self.is_cuda:
                        if not out.is_cuda and not _non_blocking_to(args, kwargs):
                            recorder.synced("cpu", clock() - started)
                    elif out.is_cuda:
                        recorder.copied(_nbytes(out), clock() - started, _non_blocking_to(args, kwargs), _pinned(self))
                except Exception:
                    pass
            return out
        return to

    def wrap_cuda(original):
        def cuda(self, *args, **kwargs):
            if compiling() or recorder.last_end is None:
                return original(self, *args, **kwargs)
            started = clock()
            out = original(self, *args, **kwargs)
            if out is not self:
                try:
                    non_blocking = bool(kwargs.get("non_blocking", len(args) > 1 and args[1] is True))
                    recorder.copied(_nbytes(out), clock() - started, non_blocking, _pinned(self))
                except Exception:
                    pass
            return out
        return cuda

    def wrap_sync(original, kind):
        def method(self, *args, **kwargs):
            if compiling() or recorder.last_end is None or not self.is_cuda:
                return original(self, *args, **kwargs)
            started = clock()
            out = original(self, *args, **kwargs)
            try:
                recorder.synced(kind, clock() - started)
            except Exception:
                pass
            return out
        return method

    wrappers = {"to": wrap_to, "cuda": wrap_cuda}
    for name in ("item", "cpu", "tolist"):
        wrappers[name] = lambda original, kind=name: wrap_sync(original, kind)
    for name, make in wrappers.items():
        original = getattr(cls, name, None)
        if original is None:
            continue
        wrapped = make(original)
        wrapped._gpumem_wrapped = True
        wrapped.__wrapped__ = original
        wrapped.__name__ = name
        wrapped.__doc__ = getattr(original, "__doc__", None)
        setattr(cls, name, wrapped)


def wrap_synchronize(cuda, recorder, clock=time.perf_counter, compiling=lambda: False):
    """Replaces ``torch.cuda.synchronize`` with a counted one."""
    original = getattr(cuda, "synchronize", None)
    if original is None or getattr(original, "_gpumem_wrapped", False):
        return

    def synchronize(*args, **kwargs):
        if compiling() or recorder.last_end is None:
            return original(*args, **kwargs)
        started = clock()
        out = original(*args, **kwargs)
        try:
            recorder.synced("synchronize", clock() - started)
        except Exception:
            pass
        return out

    synchronize._gpumem_wrapped = True
    synchronize.__wrapped__ = original
    synchronize.__doc__ = getattr(original, "__doc__", None)
    cuda.synchronize = synchronize


def install(torch, recorder):
    """Wraps torch's Tensor methods and ``torch.cuda.synchronize`` for ``recorder``."""
    compiling = compiling_probe(torch)
    wrap_tensor_class(torch.Tensor, recorder, compiling=compiling, dtype=getattr(torch, "dtype", None))
    cuda = getattr(torch, "cuda", None)
    if cuda is not None:
        wrap_synchronize(cuda, recorder, compiling=compiling)
