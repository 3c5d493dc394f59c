"""Makes the CPU kernels that really run allocate like the CUDA kernels they stand in for, where the two differ
(autocast's op lists are in _autocast.py).

Dropout: on CUDA, out-of-place dropout is ``native_dropout``, which saves a one-byte bool mask (ATen
``Dropout.cpp``, ``is_fused_kernel_acceptable``); on the CPU it multiplies by a noise tensor of the input's dtype
(4 bytes per element in float32). GPU inputs take ``native_dropout`` here too.
"""
import torch


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
