"""Makes a CPU-only process look like it has one CUDA GPU, while every tensor really is a fake CPU tensor.

Why not fake CUDA tensors: autograd's engine initialises CUDA streams for CUDA inputs during backward, which
fails without a driver (PyTorch issue 92627), and ``Module.to`` on fake tensors trips over the fake mode's
weak references. So ``cuda`` is rewritten to ``cpu`` wherever a device is named, and the recorder tracks
which storages would be on the GPU: those made by a factory or a move that named ``cuda``, and every output
of an op that had such an input.
"""
import contextlib

import torch
from torch.overrides import TorchFunctionMode

from ._cuda_kernels import cuda_dropout, is_dropout
from ._sdpa import cuda_sdpa, is_sdpa


def _is_cuda(device):
    if isinstance(device, torch.device):
        return device.type == "cuda"
    if isinstance(device, str):
        return device.startswith("cuda")
    if isinstance(device, int) and not isinstance(device, bool):
        return True  # .to(0) / .cuda(0): a CUDA ordinal
    return False


def _rewrite(value):
    return torch.device("cpu") if _is_cuda(value) else value


# Functions that only parse a device (Module.to's argument parser): the tensor moves that follow are rewritten.
_PARSE_ONLY = frozenset(["_parse_to"])


class CudaToCpuMode(TorchFunctionMode):
    """Rewrites device arguments naming CUDA to the CPU and tells the recorder the result lives on the GPU."""

    def __init__(self, recorder, release, target):
        super().__init__()
        self.recorder = recorder
        self.release = release
        self.target = target

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        to_gpu = False
        name = getattr(func, "__name__", "")
        if name in _PARSE_ONLY:
            return func(*args, **kwargs)
        if is_dropout(func):
            out = cuda_dropout(func, args, kwargs, self.recorder.is_gpu)
            if out is not None:
                return out
        if is_sdpa(func):
            out = cuda_sdpa(args, kwargs, self.target, self.recorder.is_gpu, self.recorder.writer.note)
            if out is not None:
                return out
        if "device" in kwargs and _is_cuda(kwargs["device"]):
            kwargs["device"] = torch.device("cpu")
            to_gpu = True
        if name in ("cuda",):
            args = args[:1]
            kwargs.pop("device", None)
            to_gpu = True
            func = torch.Tensor.to
            kwargs["device"] = torch.device("cpu")
        elif name == "to" and len(args) > 1 and (_is_cuda(args[1])):
            args = (args[0], torch.device("cpu")) + tuple(args[2:])
            to_gpu = True
        if not to_gpu:
            out = func(*args, **kwargs)
            self.release.after_call(func, args, out, self.recorder.is_gpu)
            return out
        with self.recorder.placing_on_gpu():
            out = func(*args, **kwargs)
        self.recorder.mark_gpu(out)
        return out


class _FakeProperties:
    def __init__(self, name, total_bytes, capability):
        self.name = name
        self.total_memory = total_bytes
        self.major, self.minor = capability
        self.multi_processor_count = 132


class _FakeStream:
    """A CUDA stream under the tracer: work on fake tensors is done at once, so there is nothing to wait for."""

    device = torch.device("cuda", 0)
    cuda_stream = 0
    stream_id = 0
    priority = 0

    def __init__(self, *args, **kwargs):
        pass

    def is_capturing(self):
        return False

    def synchronize(self):
        return None

    def query(self):
        return True

    def wait_event(self, event):
        return None

    def wait_stream(self, stream):
        return None

    def record_event(self, event=None):
        event = event or _FakeEvent()
        event.record(self)
        return event

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class _FakeEvent:
    """``torch.cuda.Event`` under the tracer: recorded and done at once; timings read 0 ms (there is no GPU)."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False, *args, **kwargs):
        self.enable_timing = enable_timing

    def record(self, stream=None):
        return None

    def wait(self, stream=None):
        return None

    def query(self):
        return True

    def synchronize(self):
        return None

    def elapsed_time(self, end_event):
        return 0.0


def patch_torch_cuda(stack, gpu_name, total_bytes, capability):
    """Answers the questions scripts ask before training (is CUDA there, how many GPUs, how much memory)."""
    # Dynamo's device registry (imported by the fake-tensor mode) checks that torch.cuda.Event and Stream are
    # the C types; importing it first lets it keep the real ones while the program sees the fakes below.
    try:
        import torch._dynamo.device_interface  # noqa: F401
    except Exception:  # pragma: no cover - a torch without dynamo has no such check
        pass
    cuda = torch.cuda
    fakes = {
        "is_available": lambda: True,
        "device_count": lambda: 1,
        "current_device": lambda: 0,
        "set_device": lambda *a, **k: None,
        "synchronize": lambda *a, **k: None,
        "empty_cache": lambda: None,
        "reset_peak_memory_stats": lambda *a, **k: None,
        "memory_allocated": lambda *a, **k: 0,
        "max_memory_allocated": lambda *a, **k: 0,
        "memory_reserved": lambda *a, **k: 0,
        "max_memory_reserved": lambda *a, **k: 0,
        # (free, total) of the GPU being estimated for, as an otherwise empty GPU would answer.
        "mem_get_info": lambda *a, **k: (total_bytes, total_bytes),
        "get_device_name": lambda *a, **k: gpu_name,
        "get_device_properties": lambda *a, **k: _FakeProperties(gpu_name, total_bytes, capability),
        "get_device_capability": lambda *a, **k: tuple(capability),
        # bfloat16 needs compute capability 8.0 (torch.cuda.is_bf16_supported asks the same of the device).
        "is_bf16_supported": lambda *a, **k: capability[0] >= 8,
        # Optimizers before torch.accelerator (2.4 and older) ask this in their CUDA-graph check.
        "is_current_stream_capturing": lambda *a, **k: False,
        "manual_seed": lambda *a, **k: None,
        "manual_seed_all": lambda *a, **k: None,
        # Timing and stream code (events around a step, side streams) needs the driver; here it is done at once.
        "Event": _FakeEvent,
        "Stream": _FakeStream,
        "current_stream": lambda *a, **k: _FakeStream(),
        "default_stream": lambda *a, **k: _FakeStream(),
        "stream": lambda *a, **k: _FakeStream(),
    }
    for name, fake in fakes.items():
        if hasattr(cuda, name):
            stack.enter_context(_patched(cuda, name, fake))
    accel = getattr(torch, "accelerator", None)
    if accel is not None:
        for name, fake in (("is_available", lambda *a, **k: True), ("device_count", lambda *a, **k: 1),
                           ("current_device_index", lambda *a, **k: 0),
                           ("current_stream", lambda *a, **k: _FakeStream()),
                           ("synchronize", lambda *a, **k: None)):
            if hasattr(accel, name):
                stack.enter_context(_patched(accel, name, fake))
    stack.enter_context(_patched(torch.autocast, "__init__", _autocast_init(torch.autocast.__init__)))
    _patch_grad_scaler(stack)


def _patch_grad_scaler(stack):
    # GradScaler skips optimizer.step() when its found-inf count is non-zero, read with .item(); fake tensors
    # have no values, so that read gets the placeholder 1 and every step would be skipped. On a GPU a healthy
    # step has finite gradients and the optimizer runs, which is the step whose memory matters.
    amp = getattr(torch, "amp", None)
    scaler = getattr(amp, "GradScaler", None) if amp is not None else None
    if scaler is None or not hasattr(scaler, "_maybe_opt_step"):
        return

    def maybe_opt_step(self, optimizer, optimizer_state, *args, **kwargs):
        return optimizer.step(*args, **kwargs)

    stack.enter_context(_patched(scaler, "_maybe_opt_step", maybe_opt_step))


def _autocast_init(original):
    # CUDA autocast on CPU tensors would change nothing; CPU autocast casts the same op families to 16 bits
    # (matmuls, convolutions), and _autocast gives it CUDA's policy op by op (softmax, norms, losses in float32).
    def init(self, device_type, *args, **kwargs):
        if device_type == "cuda":
            device_type = "cpu"
            if kwargs.get("dtype") is None and not args:
                kwargs["dtype"] = torch.float16
        return original(self, device_type, *args, **kwargs)

    return init


@contextlib.contextmanager
def _patched(owner, name, value):
    old = getattr(owner, name)
    setattr(owner, name, value)
    try:
        yield
    finally:
        setattr(owner, name, old)
