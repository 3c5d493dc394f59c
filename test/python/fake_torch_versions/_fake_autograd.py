"""Just enough of autograd for the notebook tests: ops that record a graph whose nodes save tensors as real
torch's do (``MmBackward0._saved_self``/``_saved_mat2``; ``SumBackward0`` saves no tensor, only sizes), a
``detach`` that leaves the graph, and optimizers whose first step creates their state (Adam's two moments per
parameter, lazily, as torch.optim does)."""


class _Node:
    def __init__(self, name, next_functions, saved):
        self._name = name
        self.next_functions = tuple((fn, 0) for fn in next_functions)
        for key, value in saved.items():
            setattr(self, "_saved_" + key, value)

    def name(self):
        return self._name


def install_autograd(torch, Tensor):
    """Adds matmul, Tensor.sum, Tensor.detach (leaving the graph) and grad_fn to the fake ``torch``."""
    Tensor.grad_fn = None
    Tensor.requires_grad = False
    Tensor.grad = None

    def matmul(a, b):
        out = Tensor(a.shape[0] * b.shape[-1], a.dev_index, (a.shape[0], b.shape[-1]))
        out.grad_fn = _Node("MmBackward0", [t.grad_fn for t in (a, b) if t.grad_fn is not None], {"self": a, "mat2": b})
        out.requires_grad = True
        return out

    def sum_(self):
        out = Tensor(1, self.dev_index, (1,))
        if self.grad_fn is not None:
            out.grad_fn = _Node("SumBackward0", [self.grad_fn], {"self_sym_sizes": self.shape})
            out.requires_grad = True
        return out

    plain_detach = Tensor.detach

    def detach(self):
        # A tensor that leaves the graph; the fake has no views, so a tensor with a graph gets a copy of its own.
        if self.grad_fn is None:
            return plain_detach(self)
        return Tensor(self.nbytes // 4, self.dev_index, self.shape)

    torch.matmul = matmul
    Tensor.sum = sum_
    Tensor.detach = detach


def install_optimizer_state(optim, Tensor):
    """Gives the fake optimizers torch.optim's ``state`` and ``param_groups``, and an Adam whose step fills it."""
    base_init = optim.Optimizer.__init__

    def __init__(self, params=(), step_s=0.0, **defaults):
        base_init(self, params, step_s, **defaults)
        self.state = {}
        self.param_groups = [{"params": self.params, **defaults}]

    optim.Optimizer.__init__ = __init__

    class Adam(optim.Optimizer):
        def step(self, closure=None):
            for p in self.params:
                data = getattr(p, "data", p)
                if p not in self.state:
                    n = data.nbytes // 4
                    self.state[p] = {"exp_avg": Tensor(n, data.dev_index, data.shape), "exp_avg_sq": Tensor(n, data.dev_index, data.shape)}
            return optim.Optimizer.step(self, closure)

    optim.Adam = Adam
