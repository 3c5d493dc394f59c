"""CUDA's autocast policy on the CPU autocast key, for as long as a trace runs.

The tracer runs ``torch.autocast("cuda")`` as CPU autocast (fake tensors live on the CPU), and the two keys cast
different op lists (ATen ``autocast_mode.cpp``: the ``KERNEL_CUDA`` and ``KERNEL_CPU`` registrations). An op's
outputs, and what autograd saves from them, take the dtype the op runs in, so every op gets the policy CUDA gives it:

- an op CUDA casts and CPU does not, or casts differently, gets a kernel with CUDA's policy (the tables below);
- an op only CPU casts (``cross_entropy_loss``, 3-d pooling, reflection/replication padding, ``cat`` …) falls
  through, as on CUDA. A composite op then meets CUDA's policy in its parts: ``cross_entropy_loss`` calls
  ``log_softmax`` with its input's own dtype (which the float32 policy leaves alone, an explicit dtype being
  kept), then ``nll_loss`` casts to float32 and keeps that copy for backward — where CPU autocast would copy
  the whole input to float32 first and keep float32 log-probabilities;
- an op both cast the same way keeps CPU's own kernel.

Which ops have a CUDA autocast kernel is read from the installed torch (the one the program runs with), so an op
a release does not cast on CUDA is left as it is; the tables only say how CUDA casts each one.
Not reproduced: CUDA caches the 16-bit copy of a leaf weight for the autocast region; the kernels added here
(mv, addmv, addr, einsum, chain_matmul, linalg_multi_dot, convolution, RNN cells) cast per call.
"""
import warnings

import torch
from torch.utils._pytree import tree_map

# How CUDA casts each op (autocast_mode.cpp, TORCH_LIBRARY_IMPL(aten, AutocastCUDA)). scaled_dot_product_attention
# is left to _sdpa.py, which picks the CUDA kernel as well as the dtype.
_LOWER = (
    "conv1d", "conv2d", "conv3d", "conv_tbc", "conv_transpose1d", "conv_transpose2d.input", "conv_transpose3d.input",
    "convolution", "_convolution", "cudnn_convolution", "cudnn_convolution_transpose", "prelu", "addmm", "addmv",
    "addr", "matmul", "einsum", "mm", "mv", "linalg_vecdot", "linear", "addbmm", "baddbmm", "bmm", "chain_matmul",
    "linalg_multi_dot", "_thnn_fused_lstm_cell", "_thnn_fused_gru_cell", "lstm_cell", "gru_cell", "rnn_tanh_cell",
    "rnn_relu_cell",
)
_FP32 = (
    "acos", "asin", "cosh", "erfinv", "exp", "expm1", "log", "log10", "log2", "log1p", "reciprocal", "rsqrt",
    "sinh", "tan", "pow.Tensor_Scalar", "pow.Tensor_Tensor", "pow.Scalar", "softplus", "layer_norm",
    "native_layer_norm", "group_norm", "frobenius_norm.dim", "nuclear_norm", "nuclear_norm.dim",
    "cosine_similarity", "poisson_nll_loss", "cosine_embedding_loss", "nll_loss", "nll_loss2d",
    "hinge_embedding_loss", "kl_div", "l1_loss", "smooth_l1_loss", "huber_loss", "mse_loss", "margin_ranking_loss",
    "multilabel_margin_loss", "soft_margin_loss", "triplet_margin_loss", "multi_margin_loss",
    "binary_cross_entropy_with_logits", "dist", "pdist", "cdist", "renorm", "logsumexp",
    # Newer releases (found by listing AutocastCUDA kernels, docs/estimate.md "the op-log comparison").
    "upsample_nearest1d", "upsample_nearest2d", "upsample_nearest3d", "_upsample_nearest_exact1d",
    "_upsample_nearest_exact2d", "_upsample_nearest_exact3d", "upsample_linear1d", "upsample_bilinear2d",
    "_upsample_bilinear2d_aa", "upsample_bicubic2d", "_upsample_bicubic2d_aa", "upsample_trilinear3d", "rms_norm",
)
_SET_DTYPE = (
    "prod", "prod.dim_int", "softmax.int", "log_softmax.int", "cumprod", "cumsum", "linalg_vector_norm",
    "linalg_matrix_norm", "linalg_matrix_norm.str_ord", "sum", "sum.dim_IntList",
)
# norm without a dtype is redispatched to its overload with one (float32 for an eligible input), defaults filled in.
_APPEND_DTYPE = {
    "norm.Scalar": lambda x, p=2, *, dtype: torch.ops.aten.norm.ScalarOpt_dtype(x, p, dtype=dtype),
    "norm.ScalarOpt_dim": lambda x, p, dim, keepdim=False, *, dtype: torch.ops.aten.norm.ScalarOpt_dim_dtype(
        x, p, dim, keepdim, dtype=dtype),
}
_PROMOTE = (
    "addcdiv", "addcmul", "atan2", "bilinear", "cross", "dot", "grid_sampler", "index_put", "tensordot",
    "scatter_add",
)
_BANNED = ("binary_cross_entropy",)

# What CPU autocast already does the same way (TORCH_LIBRARY_IMPL(aten, AutocastCPU)): left to its own kernel.
_CPU_SAME = frozenset(
    ("conv1d", "conv2d", "conv3d", "bmm", "mm", "baddbmm", "addmm", "addbmm", "linear", "matmul", "conv_tbc",
     "conv_transpose1d", "conv_transpose2d.input", "conv_transpose3d.input", "prelu", "linalg_vecdot",
     "cdist", "mse_loss", "cosine_embedding_loss", "nll_loss", "nll_loss2d", "hinge_embedding_loss",
     "poisson_nll_loss", "smooth_l1_loss", "l1_loss", "huber_loss", "margin_ranking_loss", "soft_margin_loss",
     "triplet_margin_loss", "multi_margin_loss", "kl_div", "multilabel_margin_loss",
     "binary_cross_entropy_with_logits"))

# Ops CPU autocast casts to float32 or promotes and CUDA autocast does not touch (they fall through on CUDA).
# Linear algebra and FFTs are left out: CUDA has no 16-bit kernels for most of them, so a real run fails there.
_CPU_ONLY = (
    "cross_entropy_loss", "avg_pool3d", "max_pool3d", "adaptive_avg_pool3d", "adaptive_max_pool3d",
    "fractional_max_pool2d", "fractional_max_pool3d", "max_unpool2d", "max_unpool3d", "reflection_pad1d",
    "reflection_pad2d", "replication_pad1d", "replication_pad2d", "replication_pad3d", "grid_sampler_2d",
    "grid_sampler_3d", "multilabel_margin_loss_forward", "ctc_loss.IntList", "ctc_loss.Tensor", "cat", "stack",
)

_LOW = (torch.float16, torch.bfloat16)
_AUTOCAST_CPU = torch._C.DispatchKeySet(torch._C.DispatchKey.AutocastCPU)


def _op(name):
    packet, _, overload = name.partition(".")
    return getattr(getattr(torch.ops.aten, packet), overload or "default")


def _has(name, key):
    """Whether this torch registers a kernel for aten ``name`` under ``key`` (False for an op it does not have)."""
    try:
        return torch._C._dispatch_has_kernel_for_dispatch_key("aten::" + name, key)
    except RuntimeError:
        return False


def _low_dtype():
    getter = getattr(torch, "get_autocast_dtype", None)
    return getter("cpu") if getter is not None else torch.get_autocast_cpu_dtype()


def _eligible(value):
    return isinstance(value, torch.Tensor) and value.is_floating_point() and value.dtype != torch.float64


def _cast_to(dtype):
    def cast(value):
        return value.to(dtype) if _eligible(value) and value.dtype != dtype else value
    return cast


def _excluded(call):
    # CUDA's wrappers run the op with autocast off, so its internals are not cast again.
    def kernel(*args, **kwargs):
        with torch._C._ExcludeDispatchKeyGuard(_AUTOCAST_CPU):
            return call(*args, **kwargs)
    return kernel


def _lower_kernel(op):
    def call(*args, **kwargs):
        args, kwargs = tree_map(_cast_to(_low_dtype()), (args, kwargs))
        return op(*args, **kwargs)
    return _excluded(call)


def _fp32_kernel(op):
    def call(*args, **kwargs):
        args, kwargs = tree_map(_cast_to(torch.float32), (args, kwargs))
        return op(*args, **kwargs)
    return _excluded(call)


def _promote_kernel(op):
    def call(*args, **kwargs):
        tensors = [v for v in torch.utils._pytree.tree_leaves((args, kwargs)) if _eligible(v)]
        # The widest floating dtype among the arguments: float32 wins over the 16-bit one (autocast's prioritize).
        wide = torch.float32 if any(t.dtype == torch.float32 for t in tensors) else _low_dtype()
        args, kwargs = tree_map(_cast_to(wide), (args, kwargs))
        return op(*args, **kwargs)
    return _excluded(call)


def _set_dtype_kernel(op):
    names = [a.name for a in op._schema.arguments]
    where = names.index("dtype")
    kwarg_only = op._schema.arguments[where].kwarg_only

    def call(*args, **kwargs):
        # An explicit dtype is kept; only an unset one becomes float32, and only for an eligible first argument.
        if args and _eligible(args[0]):
            if not kwarg_only and where < len(args):
                if args[where] is None:
                    args = args[:where] + (torch.float32,) + args[where + 1:]
            elif kwargs.get("dtype") is None:
                kwargs = dict(kwargs, dtype=torch.float32)
        return op(*args, **kwargs)
    return _excluded(call)


def _append_dtype_kernel(target):
    def call(x, *args, **kwargs):
        return target(x, *args, **kwargs, dtype=torch.float32 if _eligible(x) else x.dtype)
    return _excluded(call)


def _banned_kernel(name):
    def kernel(*args, **kwargs):
        raise RuntimeError(
            "torch.nn.functional.%s is refused under CUDA autocast (it is unsafe in 16 bits): use "
            "binary_cross_entropy_with_logits, or run it with autocast disabled and float32 inputs" % name)
    return kernel


def _cuda_kernels():
    """(op name, kernel) for every op whose CUDA policy this torch registers and CPU autocast lacks or differs on."""
    table = [(n, _lower_kernel) for n in _LOWER] + [(n, _fp32_kernel) for n in _FP32]
    table += [(n, _set_dtype_kernel) for n in _SET_DTYPE] + [(n, _promote_kernel) for n in _PROMOTE]
    out = []
    for name, make in table:
        if name in _CPU_SAME and _has(name, "AutocastCPU"):
            continue
        if _has(name, "AutocastCUDA"):
            out.append((name, make(_op(name))))
    for name, target in _APPEND_DTYPE.items():
        if _has(name, "AutocastCUDA"):
            out.append((name, _append_dtype_kernel(target)))
    for name in _BANNED:
        if _has(name, "AutocastCUDA"):
            out.append((name, _banned_kernel(name)))
    return out


def install_cuda_autocast_policy(stack):
    """Gives AutocastCPU CUDA's policy, op by op, until ``stack`` closes (closing restores CPU's own kernels)."""
    lib = torch.library.Library("aten", "IMPL")
    # Replacing CPU autocast's own kernels is the point; older torch warns about it on the program's stderr.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"(?s).*Overriding a previously registered kernel", category=UserWarning)
        for name, kernel in _cuda_kernels():
            lib.impl(name, kernel, "AutocastCPU")
        for name in _CPU_ONLY:
            if _has(name, "AutocastCPU") and not _has(name, "AutocastCUDA"):
                lib.impl(name, torch.library.fallthrough_kernel, "AutocastCPU")
    stack.callback(lib._destroy)
