"""One rank of an N-rank job, traced in one process: PyTorch's fake process group under the fake tensors.

``gpumem estimate --world-size N --rank R`` sets GPUMEM_ESTIMATE_WORLD_SIZE and GPUMEM_ESTIMATE_RANK. The program's
``init_process_group`` then gets the ``fake`` backend (torch.testing._internal.distributed.fake_pg) with a no-op
store, whatever backend and rendezvous it asked for, and sees RANK, LOCAL_RANK and WORLD_SIZE as torchrun sets them.

What a collective costs in memory is decided by its caller: DDP's reducer allocates its gradient buckets, FSDP its
all-gather and reduce-scatter buffers, and the collective itself writes into them (NCCL's own channel buffers are
outside PyTorch's allocator). Under the fake-tensor mode the c10d ops are answered by PyTorch's meta kernels
(torch/distributed/_meta_registrations.py): nothing is allocated, nothing written. Those answer with a work whose
future holds None, which DDP's reducer refuses (comm.cpp wants the reduced tensors back), so the collectives that
reduce or gather in place are answered here instead with a completed work holding their own output tensors; no
storage is made, which is what a real backend allocates through PyTorch for them too.

The fake process group is a testing module; its Python contract changed between releases (2.4 returns no tensors
from any collective and has no options). It is used only on the releases it was checked on here.
"""
import os

import torch

ENV_WORLD_SIZE = "GPUMEM_ESTIMATE_WORLD_SIZE"
ENV_RANK = "GPUMEM_ESTIMATE_RANK"

# (major, minor) releases where DDP and FSDP2 were traced under the fake process group and compared with
# the bytes they allocate on two real gloo ranks (test/python/test_trace_world.py).
CHECKED_RELEASES = ((2, 15),)

# c10d ops whose first argument is the output list the caller allocated; their work resolves to it.
_IN_PLACE = frozenset(["broadcast_", "allreduce_", "allgather_", "_allgather_base_", "reduce_scatter_",
                       "_reduce_scatter_base_", "scatter_", "alltoall_"])


def world_from_env():
    """(rank, world size) asked for, or None for a single-process trace."""
    size = os.environ.get(ENV_WORLD_SIZE)
    if not size:
        return None
    return int(os.environ.get(ENV_RANK) or 0), int(size)


def unsupported_release(version):
    """Why this torch cannot trace ranks (one line), or None when it is a checked release."""
    from ._release import parse_release
    release = parse_release(version)
    if release in CHECKED_RELEASES:
        return None
    checked = ", ".join("%d.%d" % r for r in CHECKED_RELEASES)
    return ("--world-size: torch %s is not a release the fake process group was checked on (checked: %s); its "
            "testing module torch.testing._internal.distributed.fake_pg changes between releases" % (version, checked))


def install_fake_world(stack, rank, world_size, writer, recorder):
    """Makes ``init_process_group`` start rank ``rank`` of ``world_size`` on the fake process group."""
    import torch.distributed as dist
    import torch.distributed.utils as dist_utils
    from torch._C._distributed_c10d import FakeProcessGroup
    from torch.testing._internal.distributed.fake_pg import FakeStore

    for name, value in (("RANK", rank), ("LOCAL_RANK", rank), ("WORLD_SIZE", world_size),
                        ("LOCAL_WORLD_SIZE", world_size), ("GROUP_RANK", 0)):
        os.environ[name] = str(value)
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29500")
    original = dist.init_process_group

    def init_process_group(backend=None, *args, **kwargs):
        asked = backend if backend is not None else kwargs.get("backend")
        options = FakeProcessGroup.Options()
        # Every rank holds what this one holds: collectives give back well-formed results from local data.
        options.simulate_uniform_ranks = True
        for key in ("backend", "init_method", "store", "rank", "world_size", "pg_options", "device_id"):
            kwargs.pop(key, None)
        writer.note("rank %d of %d traced on PyTorch's fake process group (the program asked for backend %s)"
                    % (rank, world_size, asked or "default"))
        return original("fake", store=FakeStore(), rank=rank, world_size=world_size, pg_options=options,
                        timeout=kwargs.get("timeout") or _default_timeout())

    stack.callback(setattr, dist, "init_process_group", original)
    dist.init_process_group = init_process_group
    # DDP compares parameter shapes across ranks by reading a metadata tensor's values in C++, which fake tensors
    # do not have; every rank traced here builds the same model, so there is nothing to compare.
    import torch.nn.parallel.distributed as ddp_module
    for owner in (dist_utils, ddp_module):
        if hasattr(owner, "_verify_param_shape_across_processes"):
            stack.callback(setattr, owner, "_verify_param_shape_across_processes",
                           owner._verify_param_shape_across_processes)
            owner._verify_param_shape_across_processes = lambda *a, **k: None
    _trace_ddp_buckets(stack, recorder, writer)
    _real_device_meshes(stack)
    _fsdp_buffers_on_gpu(stack, recorder)


def _trace_ddp_buckets(stack, recorder, writer):
    """DDP's reducer allocates its gradient buckets in C++ with no tensor argument, so the recorder cannot tell
    from the op where they live: they are on the GPU when the module's parameters are."""
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    original_init = DDP._ddp_init_helper

    def ddp_init_helper(self, *args, **kwargs):
        if self.find_unused_parameters:
            raise NotImplementedError(
                "DDP(find_unused_parameters=True) cannot be traced: its reducer decides which gradients to wait for "
                "from the values of an all-reduced usage map, which fake tensors do not have; trace the program "
                "with find_unused_parameters=False (the same parameters, gradients and buckets)")
        first = next((p for p in self.module.parameters()), None)
        if first is None or not recorder.is_gpu(first):
            return original_init(self, *args, **kwargs)
        with recorder.placing_on_gpu():
            return original_init(self, *args, **kwargs)

    stack.callback(setattr, DDP, "_ddp_init_helper", original_init)
    DDP._ddp_init_helper = ddp_init_helper

    class Reducer(dist.Reducer):
        # After the first step DDP rebuilds its buckets in the order gradients became ready, agreeing on that
        # order by broadcasting rank 0's index list and reading its values in C++ (fake tensors have none).
        # The rebuilt buckets hold the same gradients under the same size caps, so the bytes are the same.
        def _rebuild_buckets(self):
            writer.note("DDP's gradient buckets are traced in their first-step layout (after the first step DDP "
                        "rebuilds them in gradient order, agreed by values fake tensors do not have): the same bytes, "
                        "other boundaries")
            return False

    stack.callback(setattr, dist, "Reducer", dist.Reducer)
    dist.Reducer = Reducer


def _fsdp_buffers_on_gpu(stack, recorder):
    """FSDP2 on a GPU model: its all-gather and reduce-scatter buffers are on the GPU too.

    The mesh FSDP2 builds here is a CPU one (no driver), so the buffers it makes by device name (torch.empty in
    _fsdp_collectives) would look like host memory; while its collectives run on GPU parameters they are placed on
    the GPU. The unsharded parameters are freed and made again by resizing one storage to 0 and back
    (_fsdp_param.free_storage/alloc_storage), which the recorder is told, as the caching allocator sees it.
    """
    import sys

    try:
        from torch.distributed.fsdp._fully_shard import _fsdp_collectives, _fsdp_param
    except ImportError:  # pragma: no cover - checked releases have FSDP2
        return

    def on_gpu_while(fn):
        def wrapped(*args, **kwargs):
            if not _touches_gpu(recorder, args):
                return fn(*args, **kwargs)
            with recorder.placing_on_gpu():
                return fn(*args, **kwargs)
        return wrapped

    for name in ("foreach_all_gather", "foreach_all_gather_copy_out", "foreach_reduce"):
        original = getattr(_fsdp_collectives, name, None)
        if original is None:
            continue
        replacement = on_gpu_while(original)
        for module in [m for n, m in list(sys.modules.items()) if n.startswith("torch.distributed.fsdp") and m is not None]:
            if getattr(module, name, None) is original:
                stack.callback(setattr, module, name, original)
                setattr(module, name, replacement)
    for name in ("alloc_storage", "free_storage"):
        original = getattr(_fsdp_param, name, None)
        if original is None:
            continue

        def resized(tensor, _original=original, _name=name):
            _original(tensor)
            recorder.storage_resized(tensor, "FSDP " + _name)

        stack.callback(setattr, _fsdp_param, name, original)
        setattr(_fsdp_param, name, resized)


def _touches_gpu(recorder, args):
    for a in args:
        for item in (a if isinstance(a, (list, tuple)) else [a]):
            if isinstance(item, torch.Tensor) and recorder.is_gpu(item):
                return True
            sharded = getattr(item, "sharded_param", None)
            if isinstance(sharded, torch.Tensor) and recorder.is_gpu(sharded):
                return True
    return False


def _real_device_meshes(stack):
    """A DeviceMesh (FSDP2's, made by init_device_mesh) is a small CPU tensor of rank numbers that it searches
    (nonzero, tolist): it must hold real values, so its code runs outside the fake-tensor and recording modes.
    It is bookkeeping on the host, never GPU memory."""
    import functools
    import inspect

    import torch.distributed.device_mesh as mesh_module
    from torch.utils._python_dispatch import _disable_current_modes

    def outside_modes(fn):
        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with _disable_current_modes(), torch._C.DisableTorchFunction():
                return fn(*args, **kwargs)
        return wrapped

    cls = getattr(mesh_module, "DeviceMesh", None)
    if cls is None:
        return
    for name, value in list(vars(cls).items()):
        if inspect.isfunction(value):
            stack.callback(setattr, cls, name, value)
            setattr(cls, name, outside_modes(value))
        elif isinstance(value, staticmethod):
            stack.callback(setattr, cls, name, value)
            setattr(cls, name, staticmethod(outside_modes(value.__func__)))
    original = getattr(mesh_module, "init_device_mesh", None)
    if original is None:
        return
    # FSDP imports init_device_mesh by name: its modules are loaded now so their references are replaced too.
    import sys
    try:
        import torch.distributed.fsdp  # noqa: F401
    except Exception:  # pragma: no cover - a torch without FSDP has no such reference to replace
        pass
    replacement = outside_modes(original)
    for module in [m for name, m in list(sys.modules.items()) if name.startswith("torch.distributed") and m is not None]:
        if getattr(module, "init_device_mesh", None) is original:
            stack.callback(setattr, module, "init_device_mesh", original)
            setattr(module, "init_device_mesh", replacement)


def _default_timeout():
    from datetime import timedelta
    return timedelta(minutes=30)


def answer_collective(func, args):
    """For an in-place c10d collective under fake tensors: its (outputs, work) result; else None."""
    if func.namespace != "c10d" or func.overloadpacket.__name__ not in _IN_PLACE:
        return None
    from torch._C._distributed_c10d import _create_work_from_future
    outputs = args[0]
    future = torch.futures.Future()
    flat = outputs if isinstance(outputs, torch.Tensor) else [t for t in _leaves(outputs)]
    future.set_result(flat)
    return outputs, _create_work_from_future(future).boxed()


def _leaves(value):
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _leaves(v)
