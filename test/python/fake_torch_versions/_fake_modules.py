"""Assembles a fake ``torch`` package (torch, torch.cuda, torch.cuda.memory, torch._C, torch.nn) over ``Fake``."""
import os
import re
import sys
import time
import types

from _fake_autograd import install_autograd, install_optimizer_state
from _fake_core import Fake, _parse_device

ELEMENT_BYTES = 4  # float32
COPY_MS_PER_MIB = float(os.environ.get("FAKE_TORCH_COPY_MS_PER_MIB", "0"))
BACKWARD_MS = float(os.environ.get("FAKE_TORCH_BACKWARD_MS", "0"))


class Event:
    """torch.cuda.Event on a GPU that runs in step with the host: elapsed time is the host time between records."""

    def __init__(self, enable_timing=False):
        self.at = None

    def record(self, stream=None):
        self.at = time.perf_counter()

    def query(self):
        return self.at is not None

    def elapsed_time(self, end):
        return (end.at - self.at) * 1000


class device:
    def __init__(self, spec):
        text = str(spec)
        self.type = text.split(":", 1)[0]
        self.index = int(text.split(":", 1)[1]) if ":" in text else (0 if self.type == "cuda" else None)

    def __str__(self):
        return self.type if self.index is None else "%s:%d" % (self.type, self.index)


_UUID = re.compile(r"^GPU-([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$")


def _visible_uuid(index):
    """The UUID real torch reports for ordinal ``index``: that of the physical GPU CUDA_VISIBLE_DEVICES names."""
    listed = [s.strip() for s in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if s.strip()]
    match = _UUID.match(listed[index]) if index < len(listed) else None
    return match.group(1) if match else None


def make_tensor_class(fake):
    class Tensor:
        def __init__(self, numel, dev_index, shape=None):
            self.shape = tuple(shape) if shape else (numel,)
            self.nbytes = numel * ELEMENT_BYTES
            self.dev_index = dev_index
            self.block = 0
            self.block = fake.malloc(dev_index, self.nbytes) if dev_index is not None else 0
            self.address = fake.last_address if dev_index is not None else None

        @property
        def is_cuda(self):
            return self.dev_index is not None

        @property
        def device(self):
            return device("cpu" if self.dev_index is None else "cuda:%d" % self.dev_index)

        def detach(self):
            return self

        pinned = False

        def _move(self, target, non_blocking=False):
            # Like torch's C methods: .cpu() and .cuda() do not go through the Python-level .to().
            index = _parse_device(fake, target)
            if index == self.dev_index:
                return self
            if self.dev_index is None and not (self.pinned and non_blocking):
                # A copy the host waits for takes FAKE_TORCH_COPY_MS_PER_MIB (default 0): the test's known phase.
                time.sleep(COPY_MS_PER_MIB * self.nbytes / (1 << 20) / 1000)
            numel = self.nbytes // ELEMENT_BYTES
            return Tensor(numel, index, self.shape)

        def to(self, target, *args, non_blocking=False, **kwargs):
            return self._move(target, non_blocking)

        def cpu(self):
            return self._move("cpu")

        def cuda(self, index=0, non_blocking=False):
            return self._move("cuda:%d" % (index or 0), non_blocking)

        def is_pinned(self):
            return self.pinned

        def pin_memory(self):
            out = Tensor(self.nbytes // ELEMENT_BYTES, None, self.shape)
            out.pinned = True
            return out

        def item(self):
            return 0.0

        def backward(self, gradient=None):
            # The backward pass takes FAKE_TORCH_BACKWARD_MS (default 0): a test's known phase.
            time.sleep(BACKWARD_MS / 1000)

        def tolist(self):
            return [0.0] * self.shape[0]

        def __len__(self):
            return self.shape[0]

        def __del__(self):
            if self.dev_index is not None and self.block:
                fake.free(self.dev_index, self.block, self.nbytes, self.address)
                self.block = 0

    return Tensor


def make_nn(Tensor):
    nn = types.ModuleType("torch.nn")

    class Parameter:
        def __init__(self, data):
            self.data = data
            self.grad = None

    class Module:
        def __init__(self):
            self._params = []

        def add_parameter(self, numel, where="cuda"):
            self._params.append(Parameter(Tensor(numel, _parse_device(None, where))))

        def parameters(self):
            return iter(self._params)

        def to(self, target):
            for p in self._params:
                p.data = p.data.to(target)
                if p.grad is not None:
                    p.grad = p.grad.to(target)
            return self

    nn.Module = Module
    nn.Parameter = Parameter
    return nn


def make_data():
    """torch.utils.data with a DataLoader over any iterable of ready batches (the tests give the timing)."""
    utils, data, dataloader = (types.ModuleType(n) for n in ("torch.utils", "torch.utils.data", "torch.utils.data.dataloader"))

    class _BaseDataLoaderIter:
        def __init__(self, loader):
            self._it = iter(loader.source)
            # The attributes torch's iterator keeps (2.x names); the companion reads them.
            self._num_workers = loader.num_workers
            self._pin_memory = loader.pin_memory
            self._persistent_workers = loader.persistent_workers
            self._prefetch_factor = loader.prefetch_factor

        def __iter__(self):
            return self

        def __next__(self):
            return next(self._it)

    class DataLoader:
        def __init__(self, source, batch_size=1, num_workers=0, pin_memory=False, persistent_workers=False, prefetch_factor=None, **options):
            self.source = source
            self.num_workers, self.pin_memory, self.persistent_workers = num_workers, pin_memory, persistent_workers
            self.prefetch_factor = prefetch_factor if prefetch_factor is not None or num_workers == 0 else 2

        def __iter__(self):
            return _BaseDataLoaderIter(self)

    dataloader._BaseDataLoaderIter = _BaseDataLoaderIter
    dataloader.DataLoader = DataLoader
    data.DataLoader = DataLoader
    data.dataloader = dataloader
    utils.data = data
    return utils


def make_optim(hooks):
    """torch.optim, with torch 2.x's global optimizer step hooks when ``hooks``; SGD(step_s=…) sleeps that long per step."""
    optim, optimizer = types.ModuleType("torch.optim"), types.ModuleType("torch.optim.optimizer")
    pre_hooks, post_hooks = [], []

    class Optimizer:
        def __init__(self, params=(), step_s=0.0, **defaults):
            self.params, self.step_s = list(params), step_s

        def step(self, closure=None):
            for hook in list(pre_hooks):
                hook(self, (), {})
            time.sleep(self.step_s)
            for hook in list(post_hooks):
                hook(self, (), {})

        def zero_grad(self, set_to_none=True):
            pass

    class SGD(Optimizer):
        pass

    optimizer.Optimizer = optim.Optimizer = Optimizer
    optim.SGD = SGD
    if hooks:
        optimizer.register_optimizer_step_pre_hook = pre_hooks.append
        optimizer.register_optimizer_step_post_hook = post_hooks.append
    optim.optimizer = optimizer
    return optim


def make_distributed():
    """torch.distributed without communication: a process group that only knows its rank, size and backend."""
    dist = types.ModuleType("torch.distributed")
    group = {}
    dist.is_available = lambda: True
    dist.is_initialized = lambda: bool(group)

    def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1, **kwargs):
        if group:
            raise RuntimeError("trying to initialize the default process group twice!")
        group.update(backend=str(backend or "nccl"),
                     rank=rank if rank >= 0 else int(os.environ["RANK"]),
                     world_size=world_size if world_size > 0 else int(os.environ["WORLD_SIZE"]))

    def need():
        if not group:
            raise ValueError("Default process group has not been initialized, please make sure to call init_process_group.")
        return group

    dist.init_process_group = init_process_group
    dist.destroy_process_group = lambda group_=None: group.clear()
    dist.get_rank = lambda group_=None: need()["rank"]
    dist.get_world_size = lambda group_=None: need()["world_size"]
    dist.get_backend = lambda group_=None: need()["backend"]
    dist.barrier = lambda *a, **k: None
    return dist


def install(torch, version, features):
    """Fills the ``torch`` module object with the fake API of one PyTorch generation."""
    fake = Fake(features)
    torch.__version__ = version
    torch._fake = fake
    Tensor = make_tensor_class(fake)
    torch.Tensor = Tensor
    torch.device = device

    def empty(*shape, device=None, dtype=None):
        numel = 1
        for n in shape:
            numel *= n
        return Tensor(numel, _parse_device(fake, device), shape)

    torch.empty = empty
    torch.zeros = empty

    cuda = types.ModuleType("torch.cuda")
    memory = types.ModuleType("torch.cuda.memory")
    C = types.ModuleType("torch._C")

    class OutOfMemoryError(RuntimeError):
        pass

    OutOfMemoryError.__module__ = "torch.cuda" if not features.get("top_level_oom") else "torch"
    cuda.OutOfMemoryError = OutOfMemoryError
    if features.get("top_level_oom"):
        torch.OutOfMemoryError = OutOfMemoryError
    features["oom_class"] = OutOfMemoryError

    cuda.is_available = lambda: fake.available
    cuda.is_initialized = lambda: fake.initialized
    cuda.device_count = lambda: len(fake.devices)
    cuda.current_device = lambda: (fake.lazy_init(), 0)[1]
    cuda._lazy_init = fake.lazy_init
    if features.get("lazy_call", True):
        cuda._lazy_call = fake.lazy_call

    def idx(d):
        i = _parse_device(fake, d)
        return 0 if i is None else i

    cuda.memory_stats = lambda device=None: fake.stats(idx(device))
    cuda.memory_allocated = lambda device=None: fake.stats(idx(device)).get("allocated_bytes.all.current", 0)
    cuda.memory_reserved = lambda device=None: fake.stats(idx(device)).get("reserved_bytes.all.current", 0)
    cuda.max_memory_allocated = lambda device=None: fake.stats(idx(device)).get("allocated_bytes.all.peak", 0)
    cuda.empty_cache = fake.empty_cache
    cuda.ipc_collect = lambda: None
    cuda.synchronize = lambda device=None: None
    cuda.Event = Event

    def reset_peak_memory_stats(device=None):
        dev = fake.devices[idx(device)]
        dev.peak_allocated, dev.peak_reserved = dev.allocated, dev.reserved

    cuda.reset_peak_memory_stats = reset_peak_memory_stats

    def set_per_process_memory_fraction(fraction, device=None):
        fake.lazy_init()
        fake.devices[idx(device)].fraction = fraction

    cuda.set_per_process_memory_fraction = set_per_process_memory_fraction

    def mem_get_info(device=None):
        fake.lazy_init()
        dev = fake.devices[idx(device)]
        return dev.total - dev.reserved, dev.total

    cuda.mem_get_info = mem_get_info

    def get_device_properties(device):
        fake.lazy_init()
        props = types.SimpleNamespace(name="Fake GPU", total_memory=fake.devices[idx(device)].total)
        if features.get("uuid", True):
            props.uuid = _visible_uuid(idx(device)) or "00000000-0000-0000-0000-00000000000%d" % idx(device)
        return props

    cuda.get_device_properties = get_device_properties

    history = features.get("history")
    if history is not None:
        memory._record_memory_history = history(fake)
        memory._snapshot = fake.snapshot
    if features.get("observer", True):
        C._cuda_attach_out_of_memory_observer = fake.observers.append
    for name, fn in features.get("overrides", {}).items():
        target, attr = name.rsplit(".", 1)
        setattr({"torch": torch, "cuda": cuda, "memory": memory, "_C": C}[target], attr, fn)

    cuda.memory = memory
    torch.cuda = cuda
    torch._C = C
    torch.nn = make_nn(Tensor)
    torch.utils = make_data()
    torch.optim = make_optim(features.get("optimizer_hooks", True))
    install_autograd(torch, Tensor)
    install_optimizer_state(torch.optim, Tensor)
    torch.distributed = make_distributed()
    sys.modules.update({"torch.cuda": cuda, "torch.cuda.memory": memory, "torch._C": C, "torch.nn": torch.nn,
                        "torch.utils": torch.utils, "torch.utils.data": torch.utils.data,
                        "torch.utils.data.dataloader": torch.utils.data.dataloader, "torch.optim": torch.optim,
                        "torch.optim.optimizer": torch.optim.optimizer,
                        "torch.distributed": torch.distributed})
    return fake
