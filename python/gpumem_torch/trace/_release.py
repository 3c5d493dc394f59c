"""What an older PyTorch release the program will run on kept alive that the installed one does not.

``--torch-version X.Y`` names the release; the installed torch runs the step, and these differences are put back:

- before 1.11, softmax and log_softmax kept their *input* for backward as well as their output
  (``_softmax_backward_data`` took the input tensor until 1.11, which then passed only its dtype; PyTorch issue
  49600, and transformers' ``softmax_backward_data`` switching on torch < 1.11). Here the input is held by the
  output's autograd node until that node has run in backward.
- before 2.0, ``zero_grad()`` zeroed gradients in place (``set_to_none=False`` by default; pytorch/pytorch#92731),
  so gradients stay allocated through the next forward pass. Calls that do not say ``set_to_none`` get False.
"""
import functools

import torch

_SOFTMAX = frozenset([
    torch.nn.functional.softmax, torch.nn.functional.log_softmax, torch.softmax, torch.log_softmax,
    torch.Tensor.softmax, torch.Tensor.log_softmax,
])


def parse_release(text):
    """(major, minor) from "1.10" or "1.10.2+cu113"; None when not given or unreadable."""
    try:
        major, minor = text.split("+")[0].split(".")[:2]
        return int(major), int(minor)
    except (AttributeError, ValueError):
        return None


class Release:
    """The differences that apply to one target release (all off when none is named)."""

    def __init__(self, version, writer):
        self.version = version
        self.writer = writer
        self.softmax_keeps_input = version is not None and version < (1, 11)
        self.zero_grad_in_place = version is not None and version < (2, 0)

    def install(self, stack):
        if self.zero_grad_in_place:
            for owner in (torch.optim.Optimizer, torch.nn.Module):
                original = owner.zero_grad
                stack.callback(setattr, owner, "zero_grad", original)
                setattr(owner, "zero_grad", _in_place_by_default(original))
            self.writer.note("torch %d.%d: zero_grad() zeroes gradients in place unless set_to_none=True is given"
                             % self.version)
        if self.softmax_keeps_input:
            self.writer.note("torch %d.%d: softmax and log_softmax keep their input for backward" % self.version)

    def after_call(self, func, args, out, on_gpu):
        """Keeps a softmax input alive with its output's autograd node, as releases before 1.11 saved it."""
        if not self.softmax_keeps_input or func not in _SOFTMAX or not args:
            return
        x = args[0]
        node = getattr(out, "grad_fn", None)
        if node is None or not isinstance(x, torch.Tensor) or not on_gpu(x):
            return
        # The hook holds the metadata dict, not the node, so no reference cycle keeps the node alive.
        meta = node.metadata
        meta["gpumem_saved_input"] = x

        def release(grad_inputs, grad_outputs):
            meta.pop("gpumem_saved_input", None)  # a hook that returns nothing leaves the gradients as they are

        node.register_hook(release)


def _in_place_by_default(original):
    @functools.wraps(original)
    def zero_grad(self, set_to_none=False):
        return original(self, set_to_none=set_to_none)

    return zero_grad
