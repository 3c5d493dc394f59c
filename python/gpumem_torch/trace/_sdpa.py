"""Runs ``scaled_dot_product_attention`` on fake tensors through the kernel CUDA would pick (``_sdpa_choice``).

Each fused backend is called as its ATen op, so autograd saves exactly what that op's CUDA derivative saves
(``tools/autograd/derivatives.yaml``: query, key, value, output, log-sum-exp, the philox seed and offset, and the
bias for the memory-efficient kernel), and the fake-tensor meta kernels give the CUDA shapes: the log-sum-exp is
float32 [B, H, L] for flash, [B, H, L rounded up to 32] for memory-efficient (kAlignLSE) and [B, H, L, 1] for cuDNN.
The steps ``aten/src/ATen/native/transformers/attention.cpp`` (``scaled_dot_product_attention``) takes around the
kernel are taken too: a boolean mask becomes an additive one of the query's dtype; flash pads head dims to a
multiple of 8 (``pad_last_dim``); the memory-efficient kernel pads a mask whose strides are not multiples of 8
(``preprocess_mask``/``pad_bias``). When CUDA would run the math path, it is run here as CUDA runs it, with
``native_dropout``'s one-byte mask where the CPU kernel would make a noise tensor of the input's dtype.
"""
import math

import torch
import torch.nn.functional as F

from . import _sdpa_choice as choice

_aten = torch.ops.aten


def is_sdpa(func):
    return func is F.scaled_dot_product_attention


def cuda_sdpa(args, kwargs, target, on_gpu, note):
    """The call's result as the CUDA backend computes it, or None to let the CPU kernel run (not a GPU call,
    nothing CUDA could run, or a torch without the fused ops)."""
    try:
        call = choice.Call.parse(args, kwargs or {})
    except TypeError:
        return None
    if not isinstance(call.query, torch.Tensor) or not on_gpu(call.query):
        return None
    low = _autocast_dtype()
    if low is not None:
        call = _autocast(call, low)
    backend = choice.choose(call, target.capability, target.release)
    run = _RUN.get(backend)
    if run is None or not _available(backend):
        return None
    note("scaled_dot_product_attention: %s, as torch %d.%d picks on a compute capability %d.%d GPU"
         % ((_NAMES[backend],) + tuple(target.release) + tuple(target.capability)))
    # CUDA's autocast kernel runs the op with autocast excluded (the math path's internals stay as cast above).
    with torch.autocast("cpu", enabled=False):
        return run(call, target.release) if backend == choice.MATH else run(call)


def _autocast_dtype():
    """The 16-bit dtype autocast is on for (the tracer runs CUDA autocast as CPU autocast), or None."""
    try:
        on = torch.is_autocast_enabled("cpu")
        dtype = torch.get_autocast_dtype("cpu")
    except (TypeError, AttributeError):  # torch 2.4 and older
        on, dtype = torch.is_autocast_cpu_enabled(), torch.get_autocast_cpu_dtype()
    return dtype if on else None


def _autocast(call, dtype):
    # CUDA autocast runs scaled_dot_product_attention in the lower precision (autocast_mode.cpp, KERNEL_CUDA(
    # scaled_dot_product_attention, lower_precision_fp)): every floating-point tensor argument is cast first. CPU
    # autocast has no such entry, and the choice of kernel depends on the dtypes (e.g. a rotary embedding
    # leaves q and k in float32 while v is 16-bit), so the cast is made here before choosing.
    def cast(t):
        if isinstance(t, torch.Tensor) and t.is_floating_point() and t.dtype != dtype and t.dtype != torch.float64:
            return t.to(dtype)
        return t

    return choice.Call(cast(call.query), cast(call.key), cast(call.value), cast(call.attn_mask), call.dropout_p,
                       call.is_causal, call.scale, call.enable_gqa)


_NAMES = {choice.FLASH: "flash attention (output and log-sum-exp kept for backward)",
          choice.EFFICIENT: "memory-efficient attention (output and log-sum-exp kept for backward)",
          choice.CUDNN: "cuDNN attention (output and log-sum-exp kept for backward)",
          choice.MATH: "the math path (scores, probabilities and dropout mask kept for backward)"}
_OPS = {choice.FLASH: "_scaled_dot_product_flash_attention", choice.EFFICIENT: "_scaled_dot_product_efficient_attention",
        choice.CUDNN: "_scaled_dot_product_cudnn_attention", choice.MATH: "native_dropout"}


def _available(backend):
    return hasattr(_aten, _OPS[backend])


def _additive_mask(mask, dtype):
    # convert_boolean_attn_mask: True keeps a position, False gets -inf, in the query's dtype.
    if mask is None or mask.dtype != torch.bool:
        return mask
    return torch.zeros_like(mask, dtype=dtype).masked_fill_(mask.logical_not(), float("-inf"))


def _scale(call):
    return call.scale if call.scale is not None else 1.0 / math.sqrt(call.query.size(-1))


def _pad_last(t, multiple):
    extra = (-t.size(-1)) % multiple
    return F.pad(t, (0, extra)) if extra else t


def _flash(call):
    head = call.query.size(-1)
    q, k, v = (_pad_last(t, 8) for t in (call.query, call.key, call.value))
    out = _aten._scaled_dot_product_flash_attention(q, k, v, call.dropout_p, call.is_causal, False,
                                                    scale=_scale(call))[0]
    return out[..., :head] if out.size(-1) != head else out


def _aligned(mask, alignment):
    # aligned_tensor: every stride but the last a multiple of the alignment, the last 1.
    return all(s % alignment == 0 for s in mask.stride()[:-1]) and mask.stride(-1) == 1


def _efficient(call):
    q, k = call.query, call.key
    mask = _additive_mask(call.attn_mask, q.dtype)
    if mask is not None:
        if not _aligned(mask, 8):
            size = mask.size(-1)
            mask = F.pad(mask, (0, 8 - size % 8))[..., :size]
        mask = mask.expand(q.size(0), q.size(1), q.size(2), k.size(2))
    return _aten._scaled_dot_product_efficient_attention(q, k, call.value, mask, call.requires_grad(), call.dropout_p,
                                                         call.is_causal, scale=call.scale)[0]


def _cudnn(call):
    mask = _additive_mask(call.attn_mask, call.query.dtype)
    return _aten._scaled_dot_product_cudnn_attention(call.query, call.key, call.value, mask, call.requires_grad(),
                                                     call.dropout_p, call.is_causal, False, scale=call.scale)[0]


def _upcasts(release):
    """Whether the math path computes 16-bit inputs in float32: from 2.5 it does unless
    ``torch.backends.cuda.allow_fp16_bf16_reduction_math_sdp(True)`` was called (flag and upcast arrived together;
    2.4's torch.backends.cuda has neither)."""
    allowed = getattr(torch.backends.cuda, "fp16_bf16_reduction_math_sdp_allowed", lambda: False)()
    return tuple(release) >= (2, 5) and not allowed


def _math(call, release):
    # _scaled_dot_product_attention_math: q and k each scaled by sqrt(scale), scores = q @ kᵀ plus the mask (or
    # the causal mask), softmax, dropout, @ v; grouped-query attention repeats key and value heads first.
    q, k, v = call.query, call.key, call.value
    dtype = q.dtype
    # attention.cpp converts a boolean mask to the query's own dtype before the math path upcasts.
    mask = _additive_mask(call.attn_mask, dtype)
    if dtype in (torch.float16, torch.bfloat16) and _upcasts(release):
        q, k, v = (t.to(torch.float32) for t in (q, k, v))
    if call.enable_gqa and q.size(-3) != k.size(-3):
        repeat = q.size(-3) // k.size(-3)
        k, v = k.repeat_interleave(repeat, dim=-3), v.repeat_interleave(repeat, dim=-3)
    root = math.sqrt(_scale(call))
    scores = torch.matmul(q * root, (k * root).transpose(-2, -1))
    if call.is_causal:
        keep = torch.ones(q.size(-2), k.size(-2), dtype=torch.bool, device=q.device).tril()
        mask = _additive_mask(keep, q.dtype)
    if mask is not None:
        scores = scores + mask
    probs = torch.softmax(scores, -1)
    if call.dropout_p > 0:
        probs = torch.native_dropout(probs, call.dropout_p, True)[0]
    out = torch.matmul(probs, v)
    return out.to(dtype) if out.dtype != dtype else out


_RUN = {choice.FLASH: _flash, choice.EFFICIENT: _efficient, choice.CUDNN: _cudnn, choice.MATH: _math}


def _round_up(n, multiple):
    return (n + multiple - 1) // multiple * multiple


def backward_workspace(func, args):
    """Temporaries a CUDA backward kernel allocates beside its gradients, as (shape, dtype) pairs.

    Flash attention's ``mha_bwd`` (``cuda/flash_attn/flash_api.cpp``) allocates ``softmax_d`` float32 [B, H, L_q
    rounded to 128] and ``dq_accum`` float32 [B, L_q rounded to 128, H, head dim rounded to 32 (64 above 128)],
    and for grouped-query attention ``dk_expanded``/``dv_expanded`` [B, L_k, H, D] of the input dtype; all are
    freed when the op returns. (A deterministic run splits ``dq_accum`` further; not modelled.)
    """
    if func is not getattr(_aten._scaled_dot_product_flash_attention_backward, "default", None):
        return ()
    q, k = args[1], args[2]
    batch, heads, seq_q, head = q.shape
    seq_q_rounded = _round_up(seq_q, 128)
    head_rounded = _round_up(head, 32 if head <= 128 else 64)
    out = [((batch, heads, seq_q_rounded), torch.float32),
           ((batch, seq_q_rounded, heads, head_rounded), torch.float32)]
    if k.size(1) != heads:
        out += [((batch, k.size(2), heads, head), q.dtype)] * 2
    return tuple(out)
