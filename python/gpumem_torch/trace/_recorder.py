"""Records every storage the traced step allocates and frees, with where and why it was allocated.

A dispatch mode sits above the fake-tensor mode and sees each op's outputs. A storage seen for the first time
is an allocation (its size is the storage's bytes, what the caching allocator would be asked for); a
finaliser on the storage object marks its free. PyTorch keeps one Python object per storage for as long as
the storage lives, so the finaliser runs exactly when the last tensor or autograd node holding it goes.
"""
import contextlib
import os
import sys
import weakref

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

from ._distributed import answer_collective
from ._sdpa import backward_workspace
from ._values import LoopGuard

try:
    from torch._subclasses.fake_tensor import DynamicOutputShapeException as _DynamicOutputShape
except ImportError:  # pragma: no cover - every torch 2.x has it
    class _DynamicOutputShape(Exception):
        pass

_HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_TORCH = os.path.dirname(os.path.abspath(torch.__file__))
_SKIP_PREFIXES = (_HERE, _TORCH, os.path.dirname(contextlib.__file__))

# No GPU holds this much in one allocation (the largest have under 300 GB). A request above it fails as it would
# on a GPU, with CUDA's error, so a program that catches the OOM goes on and the failed request is not counted.
MAX_REAL_ALLOCATION = 4 << 40

# Ops that answer with a Python number: fake tensors carry no data, so they get a placeholder.
_LOCAL_SCALAR = torch.ops.aten._local_scalar_dense.default


def user_frame():
    """File:line of the innermost frame outside torch, gpumem and the standard library, or None."""
    frame = sys._getframe(2)
    while frame is not None:
        name = frame.f_code.co_filename
        if not name.startswith(_SKIP_PREFIXES) and not name.startswith("<"):
            return "%s:%d" % (os.path.basename(name), frame.f_lineno)
        frame = frame.f_back
    return None


class Recorder(TorchDispatchMode):
    """The dispatch mode that turns op outputs into alloc/free events for GPU storages."""

    def __init__(self, writer, state):
        super().__init__()
        self.writer = writer
        self.state = state
        self.next_id = 0
        self.live = {}  # storage key -> event id, GPU storages only
        self.gpu_keys = set()
        self.force_gpu = 0
        self.placeholders = 0
        self.loops = LoopGuard()
        self.world = None

    @contextlib.contextmanager
    def placing_on_gpu(self):
        self.force_gpu += 1
        try:
            yield
        finally:
            self.force_gpu -= 1

    def mark_gpu(self, out):
        """Moves already-seen host storages of ``out`` to the GPU (a ``.to('cuda')`` that did not copy)."""
        for t in _plain_tensors(out):
            self._track(t.untyped_storage(), t, "to", True)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is _LOCAL_SCALAR:
            return self._placeholder(args[0])
        if self.world is not None:
            answered = answer_collective(func, args)
            if answered is not None:
                return answered
        on_gpu = self.force_gpu > 0 or self._any_gpu(args) or (kwargs and self._any_gpu(kwargs))
        op = _OP_NAMES.get(func)
        if op is None:
            op = _OP_NAMES[func] = func.overloadpacket.__name__
        # Temporaries the CUDA kernel allocates and frees inside the op (live while its outputs are made).
        workspace = [self._workspace(shape, dtype, op) for shape, dtype in backward_workspace(func, args)] if on_gpu else ()
        try:
            out = func(*args, **kwargs)
        except _DynamicOutputShape:
            if self.fake is None or self.fake.shape_env is not None:
                raise
            self._allow_data_dependent_sizes()
            out = func(*args, **kwargs)
        del workspace
        for t in _plain_tensors(out):
            self._track(t.untyped_storage(), t, op, on_gpu)
        return out

    def _workspace(self, shape, dtype, op):
        t = torch.empty(shape, dtype=dtype)
        self._track(t.untyped_storage(), t, op + " (workspace)", True)
        return t

    def is_gpu(self, tensor):
        """Whether ``tensor``'s storage is one the traced program placed on the GPU."""
        return self._any_gpu(tensor)

    def _any_gpu(self, value):
        gpu_keys = self.gpu_keys
        for t in _plain_tensors(value):
            if self._key(t) in gpu_keys:
                return True
        return False

    @staticmethod
    def _key(t):
        try:
            return t.untyped_storage()._cdata
        except Exception:
            return None

    def _track(self, storage, tensor, op, on_gpu):
        key = storage._cdata
        if not on_gpu or key in self.gpu_keys:
            return
        nbytes = self._bytes(storage.nbytes())
        if nbytes > MAX_REAL_ALLOCATION:
            raise _out_of_memory(nbytes)
        self.gpu_keys.add(key)
        ident = self.next_id
        self.next_id += 1
        self.live[key] = ident
        self.writer.event(kind="alloc", id=ident, bytes=nbytes, dtype=str(tensor.dtype)[6:],
                          op=op, module=self.state.module_path(), phase=self.state.phase, step=self.state.step,
                          frame=user_frame())
        weakref.finalize(storage, self._freed, key)

    def storage_resized(self, tensor, op):
        """A GPU storage resized in place (FSDP2 frees unsharded parameters by resizing to 0 and back): the
        allocator frees the old block and allocates a new one of the new size."""
        storage = tensor.untyped_storage()
        key = storage._cdata
        if key not in self.gpu_keys:
            return
        nbytes = self._bytes(storage.nbytes())
        ident = self.live.pop(key, None)
        if ident is not None:
            self.writer.event(kind="free", id=ident)
        if nbytes == 0:
            return
        ident = self.next_id
        self.next_id += 1
        self.live[key] = ident
        self.writer.event(kind="alloc", id=ident, bytes=nbytes, dtype=str(tensor.dtype)[6:], op=op,
                          module=self.state.module_path(), phase=self.state.phase, step=self.state.step,
                          frame=user_frame())

    def _allow_data_dependent_sizes(self):
        # nonzero, masked_select, boolean-mask indexing and unique have output sizes that depend on values,
        # which fake tensors do not have. A shape environment lets them run with a symbolic size; its bytes
        # are counted at the size's upper bound (every element selected), so the estimate errs high.
        from torch.fx.experimental.symbolic_shapes import ShapeEnv
        self.fake.shape_env = ShapeEnv()
        self.writer.note("data-dependent sizes (nonzero, masked_select, x[mask], unique) are traced at their "
                         "largest (every element selected), so the memory they take is an upper bound")

    def _bytes(self, nbytes):
        """Bytes of a storage; a size that depends on data (after ``nonzero``) counts at its upper bound."""
        if isinstance(nbytes, int):
            return nbytes
        node = nbytes.node
        if node.has_hint():
            return int(node.hint)
        upper = node.shape_env.bound_sympy(node.expr).upper
        return int(upper)

    def _freed(self, key):
        self.gpu_keys.discard(key)
        ident = self.live.pop(key, None)
        if ident is not None and not self.state.finished:
            self.writer.event(kind="free", id=ident)

    def ids_of(self, tensors):
        """Event ids of the live GPU storages behind ``tensors`` (for tagging weights, gradients, states)."""
        found = []
        for t in _plain_tensors(list(tensors)):
            ident = self.live.get(self._key(t))
            if ident is not None:
                found.append(ident)
        return found

    def _placeholder(self, tensor):
        self.loops.check()
        self.placeholders += 1
        self.writer.note("data-dependent values (.item(), bool(tensor)) are not computed with fake tensors: "
                         "each got a placeholder (1.0, 1 or True); control flow that depends on them may differ")
        if tensor.dtype == torch.bool:
            return True
        if tensor.dtype.is_floating_point or tensor.dtype.is_complex:
            return 1.0
        return 1


# Leaves an op's arguments and results hold that are neither tensors nor containers of them.
_ATOMS = frozenset([int, float, bool, complex, str, type(None), torch.dtype, torch.device, torch.layout,
                    torch.memory_format, torch.Size, torch.SymInt, torch.SymFloat, torch.SymBool])
# The op's short name per overload, asked for on every op.
_OP_NAMES = {}


def _plain_tensors(value, found=None):
    """The tensors that own storage in ``value``, as a list: a wrapper subclass (FSDP2's DTensor) stands for the
    tensors it holds (``__tensor_flatten__``). A mode does not see the ops a subclass runs on its inner tensors (the
    mode is off while it handles the outer op), so the wrapper's op is counted by what its inner tensors hold.

    Ops pass and return tensors in plain tuples, lists and dicts, walked here directly (this runs several times per
    op); anything else (named tuples, return types, registered pytree nodes) gives the leaves ``tree_leaves`` gives."""
    if found is None:
        found = []
    kind = type(value)
    if kind is tuple or kind is list:
        for item in value:
            if type(item) not in _ATOMS:
                _plain_tensors(item, found)
    elif kind is dict:
        for item in value.values():
            if type(item) not in _ATOMS:
                _plain_tensors(item, found)
    elif isinstance(value, torch.Tensor):
        if getattr(kind, "__tensor_flatten__", None) is None:
            found.append(value)
        else:
            names, _ = value.__tensor_flatten__()
            for name in names:
                _plain_tensors(getattr(value, name), found)
    elif kind not in _ATOMS:
        for leaf in tree_leaves(value):
            if isinstance(leaf, torch.Tensor):
                _plain_tensors(leaf, found)
    return found


def _out_of_memory(nbytes):
    """CUDA's out-of-memory error for a request no GPU could serve (the class the program would catch)."""
    from .._format import format_bytes
    cls = getattr(torch, "OutOfMemoryError", None) or getattr(torch.cuda, "OutOfMemoryError", RuntimeError)
    return cls("CUDA out of memory. Tried to allocate %s (%d bytes): no GPU has that much memory, so under gpumem "
               "estimate a single allocation over %s fails as it would on a GPU" % (format_bytes(nbytes), nbytes,
                                                                                     format_bytes(MAX_REAL_ALLOCATION)))
