"""Which kernel ``scaled_dot_product_attention`` runs on CUDA, decided the way PyTorch decides it for the target GPU.

On the CPU, SDPA with dropout runs the math path, which keeps the L×S scores, probabilities and dropout mask for
backward; on CUDA the fused kernels (flash, memory-efficient, cuDNN) support dropout and keep only the output,
a log-sum-exp and the RNG state. The rules below follow ``aten/src/ATen/native/transformers/cuda/sdp_utils.cpp``
(``select_sdp_backend`` and the ``can_use_*`` filters it calls) and are evaluated on the traced tensors with the
target's compute capability instead of the local device's. Conditions on things the tracer cannot know (a
nested tensor, an FA3 opt-in, a ROCm build) are left out: the traced programs use dense CUDA tensors.
"""
import torch

FLASH, EFFICIENT, CUDNN, MATH = "flash", "efficient", "cudnn", "math"
# at::SDPBackend's numbering, as torch._C._get_sdp_priority_order() answers it.
_BY_NUMBER = {0: MATH, 1: FLASH, 2: EFFICIENT, 3: CUDNN}
_DEFAULT_ORDER = [FLASH, EFFICIENT, MATH, CUDNN]
_LOW = (torch.float16, torch.bfloat16)


class Call:
    """The arguments of one ``scaled_dot_product_attention`` call, named as the ATen schema names them."""

    def __init__(self, query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                 enable_gqa=False):
        self.query, self.key, self.value = query, key, value
        self.attn_mask, self.dropout_p, self.is_causal = attn_mask, float(dropout_p), bool(is_causal)
        self.scale, self.enable_gqa = scale, bool(enable_gqa)

    @classmethod
    def parse(cls, args, kwargs):
        return cls(*args, **kwargs)

    def requires_grad(self):
        """``input_requires_grad`` in sdp_utils: grad mode on and any of q, k, v needing a gradient."""
        return torch.is_grad_enabled() and any(t.requires_grad for t in (self.query, self.key, self.value))


def prefers_cudnn(capability, release):
    """Whether cuDNN attention goes first: ``check_prefer_cudnn_attention`` asks for sm90/sm10x and a runtime cuDNN
    newer than 9.15.0. The check is in 2.10; torch 2.11 wheels are the first to bundle such a cuDNN
    (huggingface/transformers#48163, where the maintainers traced it), so earlier releases keep cuDNN last.
    Assumed: the wheel's own cuDNN is the one loaded (a system cuDNN on LD_LIBRARY_PATH would change it)."""
    major, minor = capability
    return release >= (2, 11) and major in (9, 10) and minor in (0, 3)


def priority(capability, release):
    """The order backends are tried in: the program's own (``sdpa_kernel(..., set_priority=True)``) when it set
    one, else PyTorch's default, with cuDNN moved first where ``prefers_cudnn`` holds."""
    getter = getattr(torch._C, "_get_sdp_priority_order", None)
    order = [_BY_NUMBER[n] for n in getter() if n in _BY_NUMBER] if getter is not None else list(_DEFAULT_ORDER)
    if order == _DEFAULT_ORDER and prefers_cudnn(capability, release):
        return [CUDNN, FLASH, EFFICIENT, MATH]
    return order


def enabled():
    """Backends the program left on (torch.backends.cuda.enable_*_sdp and sdpa_kernel set these global flags)."""
    cuda = torch.backends.cuda
    flag = lambda name: bool(getattr(cuda, name, lambda: False)())  # noqa: E731 - one line per backend below
    return {FLASH: flag("flash_sdp_enabled"), EFFICIENT: flag("mem_efficient_sdp_enabled"),
            MATH: flag("math_sdp_enabled"), CUDNN: flag("cudnn_sdp_enabled")}


def choose(call, capability, release, on=None):
    """The backend CUDA would run for ``call`` on a GPU of ``capability`` with torch ``release`` (major, minor)."""
    on = on or enabled()
    for backend in priority(capability, release):
        if not on.get(backend):
            continue
        if backend == MATH or _CHECKS[backend](call, capability):
            return backend
    return None


# ----------------------------------------------------------------------------------------------- shared filters
def _dense_4d(call):
    # check_tensor_shapes: the fused kernels take 4-D query, key and value only.
    return all(isinstance(t, torch.Tensor) and t.dim() == 4 and not t.is_nested
               for t in (call.query, call.key, call.value))


def _same_dtype(call, allowed):
    # check_tensor_dtype: q, k, v share one dtype from the backend's list.
    dtype = call.query.dtype
    return dtype in allowed and call.key.dtype == dtype and call.value.dtype == dtype


def _heads_ok(call):
    # check_batch_size_and_num_heads_dense: equal batch; equal heads, or with enable_gqa query heads a multiple of
    # key/value heads (flash, efficient and cuDNN all support grouped-query attention on CUDA).
    q, k, v = call.query, call.key, call.value
    if not (q.size(0) == k.size(0) == v.size(0)) or k.size(1) != v.size(1):
        return False
    if q.size(1) == k.size(1):
        return True
    return call.enable_gqa and k.size(1) > 0 and q.size(1) % k.size(1) == 0


def _nonzero_lengths(call):
    # check_nonzero_sequence_lengths_dense
    return call.query.size(2) > 0 and call.key.size(2) > 0


def _last_dim_contiguous(call, ignore_singleton):
    # check_last_dim_stride_equals_1_dense; flash and cuDNN ignore a last dimension of size 1.
    for t in (call.query, call.key, call.value):
        if t.stride(-1) != 1 and not (ignore_singleton and t.size(-1) == 1):
            return False
    return True


def _in_range(capability, low, high):
    return low <= tuple(capability) <= high


# ----------------------------------------------------------------------------------------------- per backend
def _flash_ok(call, capability):
    """``can_use_flash_attention``."""
    q, k, v = call.query, call.key, call.value
    if not _dense_4d(call) or call.attn_mask is not None:  # check_for_attn_mask: flash takes no mask
        return False
    head = q.size(-1)
    if not (head == k.size(-1) == v.size(-1) and head <= 256):  # check_head_dim_size_flash
        return False
    if not _in_range(capability, (8, 0), (12, 1)):  # check_flash_attention_hardware_support
        return False
    # check_requires_grad_and_head_dim_gt192_constraints_on_sm86_89_or_120
    if call.requires_grad() and (_in_range(capability, (8, 6), (8, 9)) or _in_range(capability, (12, 0), (12, 1))):
        if not (head <= 192 or (call.dropout_p == 0 and head > 224)):
            return False
    if call.is_causal and q.size(-2) != k.size(-2):  # check_flash_causal_non_square_seqlens
        return False
    if not _same_dtype(call, _LOW):  # check_dtypes_flash_attention (sm80+: fp16, bf16)
        return False
    return _heads_ok(call) and _nonzero_lengths(call) and _last_dim_contiguous(call, True)


def gemm_alignment(call, capability):
    """``minimum_gemm_alignment``: elements the memory-efficient kernel's head dims must be a multiple of."""
    half = call.query.dtype in _LOW
    tensor_cores = capability[0] >= 8 or (capability[0] >= 7 and half)
    alignment = 4 if capability[0] >= 8 else 1
    if tensor_cores:
        alignment = max(alignment, 128 // (16 if half else 32))
    return alignment


def _efficient_ok(call, capability):
    """``can_use_mem_efficient_attention``."""
    q, k, v = call.query, call.key, call.value
    if not _in_range(capability, (5, 0), (12, 1)) or not _dense_4d(call):
        return False
    align = gemm_alignment(call, capability)
    # check_head_dim_size_mem_efficient
    if not (q.size(-1) == k.size(-1) and q.size(-1) > 0 and v.size(-1) > 0
            and q.size(-1) % align == 0 and v.size(-1) % align == 0):
        return False
    # check_data_ptr_alignment_mem_efficient (sm80+): the allocator's base pointers are aligned, so the storage
    # offset in bytes decides.
    if capability[0] >= 8:
        need = align * q.element_size()
        if any(t.numel() and (t.storage_offset() * t.element_size()) % need for t in (q, k, v)):
            return False
    if not (_nonzero_lengths(call) and _last_dim_contiguous(call, False) and _heads_ok(call)):
        return False
    allowed = (torch.float16, torch.float32, torch.bfloat16) if capability[0] >= 8 else (torch.float16, torch.float32)
    return _same_dtype(call, allowed)


# cuDNN's head-dimension limit: 128, and more only with a cuDNN (> 9.22) and frontend newer than the wheels the
# releases modelled here bundle; assumed 128.
CUDNN_MAX_HEAD_DIM = 128


def _cudnn_ok(call, capability):
    """``can_use_cudnn_attention`` (the cuDNN version checks assume the wheel's cuDNN, see ``prefers_cudnn``)."""
    q, k, v = call.query, call.key, call.value
    if not _dense_4d(call) or torch.are_deterministic_algorithms_enabled():  # check_cudnn_deterministic
        return False
    if not _same_dtype(call, _LOW) or not _in_range(capability, (8, 0), (12, 1)):
        return False
    if call.dropout_p * 16.0 != int(call.dropout_p * 16.0):  # check_cudnn_dropout: steps of 1/16 only
        return False
    if not (_nonzero_lengths(call) and _last_dim_contiguous(call, True) and _heads_ok(call)):
        return False
    # check_cudnn_tensor_shapes
    if q.size(0) > 65535 or q.size(1) > 65535:
        return False
    d_qk, d_v = q.size(3), v.size(3)
    if d_qk > CUDNN_MAX_HEAD_DIM or d_v > CUDNN_MAX_HEAD_DIM or d_qk % 8 or d_v % 8:
        return False
    if k.size(2) == 1 or (call.dropout_p != 0 and q.size(2) == 1):
        return False
    return True


_CHECKS = {FLASH: _flash_ok, EFFICIENT: _efficient_ok, CUDNN: _cudnn_ok}
