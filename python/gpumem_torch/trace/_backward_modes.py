"""Keeps the CUDA-to-CPU rewrite on for the Python code autograd runs during backward.

Autograd calls back into Python during backward with an empty torch-function mode stack, though the program's
``backward()`` ran inside the tracer's mode (the dispatch modes, fake tensors and the recorder, stay on). Two such
callbacks run the program's own forward code again: activation checkpointing's recomputation, in a custom
Function's backward (reentrant) or in a saved-tensor unpack hook (non-reentrant). Without the mode that second
forward took the CPU's dropout (a noise tensor of the input's dtype) where the first took CUDA's (a bool mask), so
non-reentrant checkpointing refused the recomputed values, and reentrant checkpointing counted the wrong bytes.
Both callbacks are wrapped to enter the mode again when, and only when, the stack is empty.
"""
import functools

import torch
from torch.autograd.function import BackwardCFunction


def keep_mode_in_backward(stack, make_mode):
    """Wraps custom Function backwards and saved-tensor unpack hooks (restored when ``stack`` closes)."""

    def in_mode(fn):
        @functools.wraps(fn)
        def run(*args, **kwargs):
            if torch._C._len_torch_function_stack() > 0:
                return fn(*args, **kwargs)
            with make_mode():
                return fn(*args, **kwargs)

        return run

    original_apply = BackwardCFunction.apply
    BackwardCFunction.apply = in_mode(original_apply)
    stack.callback(setattr, BackwardCFunction, "apply", original_apply)

    hooks = torch.autograd.graph.saved_tensors_hooks
    original_init = hooks.__init__

    @functools.wraps(original_init)
    def init(self, pack_hook, unpack_hook):
        original_init(self, pack_hook, in_mode(unpack_hook))

    hooks.__init__ = init
    stack.callback(setattr, hooks, "__init__", original_init)
