"""Makes the CPU kernels that really run allocate like the CUDA kernels they stand in for, where the two differ.

Autocast: CUDA's autocast runs a list of ops in float32 (ATen ``autocast_mode.h``: ``AT_FORALL_FP32`` casts the
inputs up, ``AT_FORALL_FP32_SET_OPT_DTYPE`` asks for a float32 result), while CPU autocast keeps most of them
(softmax, log_softmax, layer_norm, exp, sum …) in the 16-bit dtype of their input. Each such op gets an
``AutocastCPU`` kernel with CUDA's policy for as long as the trace runs, so e.g. attention probabilities are
saved in float32 as on the GPU.

Dropout: on CUDA, out-of-place dropout is ``native_dropout``, which saves a one-byte bool mask (ATen
``Dropout.cpp``, ``is_fused_kernel_acceptable``); on the CPU it multiplies by a noise tensor of the input's dtype
(4 bytes per element in float32). GPU inputs take ``native_dropout`` here too.
"""
import torch
from torch.utils._pytree import tree_map

# CUDA's float32 list less what CPU autocast already runs in float32.
_FP32_OPS = (
    "acos", "asin", "cosh", "erfinv", "exp", "expm1", "log", "log10", "log2", "log1p", "reciprocal", "rsqrt",
    "sinh", "tan", "pow.Tensor_Scalar", "pow.Tensor_Tensor", "pow.Scalar", "softplus", "layer_norm",
    "native_layer_norm", "group_norm", "frobenius_norm.dim", "nuclear_norm", "nuclear_norm.dim",
    "cosine_similarity", "dist", "pdist", "renorm", "logsumexp",
    # Found by listing every aten op with an AutocastCUDA kernel and no AutocastCPU one (docs/estimate.md, "the
    # op-log comparison"): interpolation runs in float32 under CUDA autocast, and so does rms_norm (2.4 and later).
    "upsample_nearest1d", "upsample_nearest2d", "upsample_nearest3d", "_upsample_nearest_exact1d",
    "_upsample_nearest_exact2d", "_upsample_nearest_exact3d", "upsample_linear1d", "upsample_bilinear2d",
    "_upsample_bilinear2d_aa", "upsample_bicubic2d", "_upsample_bicubic2d_aa", "upsample_trilinear3d", "rms_norm",
)
_FP32_SET_DTYPE_OPS = (
    "softmax.int", "log_softmax.int", "cumprod", "cumsum", "linalg_vector_norm", "linalg_matrix_norm",
    "sum", "sum.dim_IntList",
)
_LOW = (torch.float16, torch.bfloat16)
_AUTOCAST_CPU = torch._C.DispatchKeySet(torch._C.DispatchKey.AutocastCPU)


def _op(name):
    packet, _, overload = name.partition(".")
    return getattr(getattr(torch.ops.aten, packet), overload or "default")


def _up(value):
    if isinstance(value, torch.Tensor) and value.dtype in _LOW:
        return value.to(torch.float32)
    return value


def _fp32_kernel(op):
    def kernel(*args, **kwargs):
        with torch._C._ExcludeDispatchKeyGuard(_AUTOCAST_CPU):
            args, kwargs = tree_map(_up, (args, kwargs))
            return op(*args, **kwargs)

    return kernel


def _set_dtype_kernel(op):
    names = [a.name for a in op._schema.arguments]
    where = names.index("dtype")
    kwarg_only = op._schema.arguments[where].kwarg_only

    def kernel(*args, **kwargs):
        with torch._C._ExcludeDispatchKeyGuard(_AUTOCAST_CPU):
            first = args[0] if args else None
            eligible = isinstance(first, torch.Tensor) and first.is_floating_point() and first.dtype != torch.float64
            if eligible:
                if not kwarg_only and where < len(args):
                    if args[where] is None:
                        args = args[:where] + (torch.float32,) + args[where + 1:]
                elif kwargs.get("dtype") is None:
                    kwargs = dict(kwargs, dtype=torch.float32)
            return op(*args, **kwargs)

    return kernel


def install_cuda_autocast_policy(stack):
    """Registers CUDA's float32 autocast policy on AutocastCPU until ``stack`` closes."""
    lib = torch.library.Library("aten", "IMPL")
    for name in _FP32_OPS:
        if not hasattr(torch.ops.aten, name.partition(".")[0]):
            continue  # an op this torch does not have (rms_norm before 2.4)
        lib.impl(name, _fp32_kernel(_op(name)), "AutocastCPU")
    for name in _FP32_SET_DTYPE_OPS:
        lib.impl(name, _set_dtype_kernel(_op(name)), "AutocastCPU")
    stack.callback(lib._destroy)


def _dropout_args(func, args, kwargs):
    """(input, p, training, inplace) of a ``F.dropout`` or ``torch.dropout`` call."""
    names = ("input", "p", "training", "inplace") if func is torch.nn.functional.dropout else ("input", "p", "train")
    defaults = {"p": 0.5, "training": True, "train": True, "inplace": False}
    values = dict(zip(names, args))
    for name in names[len(args):]:
        values[name] = kwargs.get(name, defaults.get(name))
    return values["input"], values["p"], values.get("training", values.get("train")), values.get("inplace", False)


def is_dropout(func):
    return func is torch.nn.functional.dropout or func is torch.dropout


def cuda_dropout(func, args, kwargs, on_gpu):
    """The call's result as CUDA computes it (``native_dropout``), or None when the CPU kernel is the same."""
    x, p, training, inplace = _dropout_args(func, args, kwargs or {})
    if not isinstance(x, torch.Tensor) or inplace or not training or not 0 < p < 1 or x.numel() == 0 or not on_gpu(x):
        return None
    return torch.native_dropout(x, p, True)[0]
