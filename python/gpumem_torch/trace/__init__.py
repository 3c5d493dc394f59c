"""``gpumem estimate``'s tracer: runs the user's real training step on fake tensors and records its memory.

Started by gpumem's sitecustomize when ``GPUMEM_ESTIMATE_TRACE`` names the trace file; takes over at
``import torch``, lets the program run N training steps (``GPUMEM_ESTIMATE_STEPS``, default 2) and then ends
the process. Importing this package does not import torch. See docs/estimate.md.
"""
import os
import sys

ENV_TRACE = "GPUMEM_ESTIMATE_TRACE"
ENV_STEPS = "GPUMEM_ESTIMATE_STEPS"
ENV_GPU_NAME = "GPUMEM_ESTIMATE_GPU_NAME"
ENV_GPU_BYTES = "GPUMEM_ESTIMATE_GPU_BYTES"
ENV_CHECKPOINT = "GPUMEM_ESTIMATE_CHECKPOINT"
# The PyTorch release the program will run on, when older than the one tracing it (--torch-version).
ENV_TORCH_RELEASE = "GPUMEM_ESTIMATE_TORCH_VERSION"

_session = None


def install():
    """Arms the tracer: starts it when torch is imported, and records why a program ended without a step."""
    from .._import_hook import install as after_torch_import
    from ._writer import TraceWriter

    global _session
    writer = TraceWriter(os.environ[ENV_TRACE])
    _session = {"writer": writer, "tracer": None, "done": False}
    previous = sys.excepthook

    def excepthook(kind, value, tb):
        if not _session["done"]:
            where = _innermost_user_frame(tb)
            direct = _direct_cuda_call(value, tb)
            _finish_error(direct or "%s%s" % (_describe(kind, value), " (at %s)" % where if where else ""))
        previous(kind, value, tb)

    sys.excepthook = excepthook
    import atexit
    atexit.register(_at_exit)
    after_torch_import(_start)


def _start(torch):
    try:
        _set_up(torch)
    except Exception as exc:
        # Run untraced, the program would train for real (on the GPU, where there is one) and the estimate would
        # have no step: the trace says why and the process ends before the program's next line.
        _session["tracer"] = None
        _stop("the tracer could not start with torch %s: %s" % (getattr(torch, "__version__", "?"), _describe(type(exc), exc)))


def _stop(message):
    """Ends the process before the program's first step, with ``message`` as the trace's error."""
    _finish_error(message)
    sys.stderr.flush()
    os._exit(3)


def _set_up(torch):
    from ._distributed import unsupported_release, world_from_env
    from ._release import parse_release
    from ._tracer import Tracer
    world = world_from_env()
    refused = unsupported_release(torch.__version__) if world is not None else None
    if refused is not None:
        # Before any step: the trace says why, and the program does not run on a process group it cannot use.
        _stop(refused)
    steps = int(os.environ.get(ENV_STEPS) or 2)
    tracer = Tracer(torch, _session["writer"], steps=steps,
                    gpu_name=os.environ.get(ENV_GPU_NAME) or "NVIDIA H100 80GB HBM3",
                    gpu_bytes=int(os.environ.get(ENV_GPU_BYTES) or 85520809984), on_done=_finish_ok,
                    checkpoint=os.environ.get(ENV_CHECKPOINT) == "1",
                    release=parse_release(os.environ.get(ENV_TORCH_RELEASE)), world=world)
    _session["tracer"] = tracer
    tracer.start()


def tracer():
    """The running tracer (for the ``--entry`` runner), or None."""
    return _session["tracer"] if _session else None


def _finish_ok():
    _session["done"] = True
    _session["tracer"].finish(None)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(0)


def _finish_error(message):
    if _session["done"]:
        return
    _session["done"] = True
    t = _session["tracer"]
    if t is not None:
        t.finish(message)
    else:
        _session["writer"].finish({"torch": None, "steps": 0, "stepsDone": 0}, error=message)


def _at_exit():
    t = _session["tracer"]
    if t is None:
        _finish_error("the program ended without importing torch")
    elif t.state.step == 0:
        _finish_error("the program ended before its first training step (no optimizer.step() was called)")
    else:
        _finish_error("the program ended after %d of %d training steps" % (t.state.step, t.state.steps))


def _describe(kind, value):
    if kind.__name__ == "GuardOnDataDependentSymNode":
        # A branch or int() on the size nonzero/x[mask]/unique produced: fake tensors have no values to decide it.
        expr = getattr(value, "cond", None)
        return ("data-dependent control flow: the program branches on, or takes a number from, a size that "
                "depends on tensor values%s, which fake tensors do not have" % (" (%s)" % expr if expr is not None else ""))
    return "%s: %s" % (kind.__name__, _one_line(value))


# What torch says when a call reaches the CUDA driver or runtime, which the tracer's process does not have.
_NO_DRIVER = ("Found no NVIDIA driver", "CUDA driver version is insufficient", "no CUDA GPUs are available",
              "Torch not compiled with CUDA enabled", "CUDA error", "cudaGetDeviceCount", "NVIDIA driver on your system")


def _direct_cuda_call(value, tb):
    """For an error from the CUDA driver: one line naming the call that needed a GPU and where; else None."""
    message = str(value)
    if not any(marker in message for marker in _NO_DRIVER):
        return None
    import linecache
    from ._recorder import _SKIP_PREFIXES
    user, callee = None, None
    while tb is not None:
        code = tb.tb_frame.f_code
        if not code.co_filename.startswith(_SKIP_PREFIXES) and "site-packages" not in code.co_filename and not code.co_filename.startswith("<"):
            user, callee = tb, None
        elif user is not None and callee is None:
            callee = "%s.%s" % (tb.tb_frame.f_globals.get("__name__", "?"), code.co_name)
        tb = tb.tb_next
    if user is None:
        return None
    filename = user.tb_frame.f_code.co_filename
    source = linecache.getline(filename, user.tb_lineno).strip()
    what = ", ".join(x for x in (callee, "in `%s`" % source[:120] if source else None) if x)
    return ("%s:%d calls CUDA directly%s, which needs a real GPU: the traced step runs on fake tensors without one "
            "(torch.cuda.synchronize, Event, Stream and GradScaler are supported); skip that call when "
            "GPUMEM_ESTIMATE_TRACE is set" % (os.path.basename(filename), user.tb_lineno, " (%s)" % what if what else ""))


def _one_line(value):
    text = str(value).strip().splitlines()
    return text[0][:300] if text else ""


def _innermost_user_frame(tb):
    from ._recorder import _SKIP_PREFIXES
    found = None
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        if not name.startswith(_SKIP_PREFIXES) and "site-packages" not in name and not name.startswith("<"):
            found = "%s:%d" % (os.path.basename(name), tb.tb_lineno)
        tb = tb.tb_next
    return found
