"""What in an IPython kernel keeps CUDA tensors alive: named variables and the holders people do not see.

A notebook keeps memory after ``del x`` when something else still refers to the tensor: the output cache
(``_``, ``__``, ``___``, ``Out[n]``, ``_n``), the last exception's traceback (its frames keep every local of
the function that failed), a function's closure, an optimizer's state, or the autograd graph of a kept loss
(its saved tensors). ``scan`` lists each holder with the bytes of the CUDA tensors it reaches and how to drop
it. Bytes are counted once per storage within a holder; two holders may reach the same tensor (a model and its
optimizer share the parameters), so their bytes are not added up.
"""
import sys
import types

# Names IPython itself puts in the user namespace: not the user's variables.
_IPYTHON_NAMES = {"In", "Out", "_ih", "_oh", "_dh", "_ii", "_iii", "_i", "exit", "quit", "get_ipython", "__builtin__",
                  "__builtins__", "__name__", "__doc__", "__package__", "__loader__", "__spec__"}
_MAX_DEPTH = 32
_MAX_OBJECTS = 20000


class Holder:
    """One thing that keeps CUDA tensors alive: its name, what it is, bytes, tensor ids and how to drop it."""

    def __init__(self, name, what, drop):
        self.name, self.what, self.drop = name, what, drop
        self.bytes = 0
        self.tensors = {}  # storage key -> tensor (kept only while the scan's result is alive)

    def add(self, key, tensor, nbytes):
        if key not in self.tensors:
            self.tensors[key] = tensor
            self.bytes += nbytes


def _storage(torch, t):
    """(key, bytes) of a CUDA tensor's storage, so views of one storage count once; None for other objects."""
    if not isinstance(t, torch.Tensor) or not getattr(t, "is_cuda", False):
        return None
    try:
        storage = t.untyped_storage()
        return ("storage", storage.data_ptr()), int(storage.nbytes())
    except Exception:  # the fake torch of the tests, or a tensor without storage (meta)
        return ("object", id(t)), int(getattr(t, "nbytes", 0))


def _walk(torch, root, holder, graphs=None):
    """Adds every CUDA tensor reachable from ``root`` through containers, modules, optimizers and objects'
    attributes to ``holder``; with ``graphs`` (a list), tensors with a ``grad_fn`` are put there for the graph
    scan instead of being followed into their graph here."""
    seen = set()
    stack = [(root, 0)]
    while stack and len(seen) < _MAX_OBJECTS:
        obj, depth = stack.pop()
        if id(obj) in seen or depth > _MAX_DEPTH or obj is None or isinstance(obj, (str, bytes, int, float, bool, type, types.ModuleType)):
            continue
        seen.add(id(obj))
        found = _storage(torch, obj)
        if found is not None:
            holder.add(found[0], obj, found[1])
            # Only leaves keep a .grad (reading it on another tensor makes torch warn).
            grad = getattr(obj, "grad", None) if getattr(obj, "is_leaf", True) else None
            if grad is not None:
                stack.append((grad, depth + 1))
            if graphs is not None and getattr(obj, "grad_fn", None) is not None:
                graphs.append(obj)
            continue
        if isinstance(obj, dict):
            # Values only: an optimizer's state is keyed by the model's parameters, which it does not hold for us.
            stack.extend((v, depth + 1) for v in obj.values())
        elif isinstance(obj, (list, tuple, set, frozenset)):
            stack.extend((v, depth + 1) for v in obj)
        elif isinstance(obj, _NAMED_ON_THEIR_OWN) or type(obj).__module__.split(".")[0] in ("IPython", "ipykernel"):
            continue  # closures and tracebacks are holders of their own; the shell would reach everything
        elif hasattr(obj, "__dict__"):
            # Modules (_parameters, _buffers, _modules), optimizers (state, param_groups), parameters, any object.
            stack.extend((v, depth + 1) for v in vars(obj).values())


_NAMED_ON_THEIR_OWN = (types.FunctionType, types.MethodType, types.FrameType, types.TracebackType)


def _graph_tensors(torch, loss, holder):
    """Adds the tensors the autograd graph of ``loss`` saved for backward (``_saved_*`` of each node)."""
    seen = set()
    nodes = [loss.grad_fn]
    while nodes and len(seen) < _MAX_OBJECTS:
        node = nodes.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        for attr in dir(node):
            if attr.startswith("_saved_"):
                try:
                    value = getattr(node, attr)
                except Exception:  # freed already (after backward), or not readable
                    continue
                for t in value if isinstance(value, (list, tuple)) else (value,):
                    found = _storage(torch, t)
                    if found is not None:
                        holder.add(found[0], t, found[1])
        nodes.extend(fn for fn, _ in getattr(node, "next_functions", ()) if fn is not None)


def reach(torch, value):
    """A holder of every CUDA tensor `value` keeps alive, the autograd graphs of the tensors in it included."""
    h, graphs = Holder("", "", ""), []
    _walk(torch, value, h, graphs)
    for t in graphs:
        _graph_tensors(torch, t, h)
    return h


def _traceback_frames():
    tb = getattr(sys, "last_traceback", None)
    frames = []
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    return frames


def scan(torch, ns):
    """Every holder of CUDA tensors in the user namespace ``ns``, largest first (see the module's doc)."""
    holders = []
    out = ns.get("Out") if isinstance(ns.get("Out"), dict) else {}
    graphs = []
    # `_`, `__`, `___` and `_N` are other names of outputs in Out: listed with their Out[N], unless not in it.
    aliases = {}
    for name, value in ns.items():
        if name in ("_", "__", "___") or (name.startswith("_") and name[1:].isdigit()):
            aliases.setdefault(id(value), []).append(name)
    in_out = {id(v) for v in out.values()}
    for name, value in list(ns.items()):
        if name in _IPYTHON_NAMES or (name.startswith("_i") and name[2:].isdigit()):
            continue
        if name in ("_", "__", "___") or (name.startswith("_") and name[1:].isdigit()):
            if id(value) not in in_out:
                h = Holder(name, "IPython's output cache (the value a cell displayed)", "%gpumem free " + name)
                _walk(torch, value, h)
                holders.append(h)
            continue
        if name.startswith("_"):
            continue
        if isinstance(value, types.FunctionType) and value.__closure__:
            h = Holder(name, "closure of function %s()" % name, "%%gpumem free %s (or define it again without the tensor)" % name)
            _walk(torch, [c.cell_contents for c in value.__closure__ if _has_contents(c)], h)
            holders.append(h)
            continue
        if _is_optimizer(torch, value):
            # Its parameters are the model's: what it adds is its state (moments kept between steps).
            h = Holder(name, "optimizer state (moments kept between steps; the parameters are the model's)",
                       "%gpumem free " + name + "  (or " + name + ".state.clear())")
            _walk(torch, value.state, h)
            holders.append(h)
            continue
        own_graphs = []
        h = Holder(name, _kind(torch, value), "%gpumem free " + name)
        _walk(torch, value, h, own_graphs)
        holders.append(h)
        for t in own_graphs:
            g = Holder("%s.grad_fn" % name if t is value else "graph in %s" % name,
                       "autograd graph kept by %s (tensors saved for backward)" % name,
                       "%s = %s.detach()  (or keep %s.item(), the number)" % (name, name, name) if t is value else "detach the tensors kept in %s" % name)
            _graph_tensors(torch, t, g)
            graphs.append(g)
    for n, value in out.items():
        also = sorted(aliases.get(id(value), []), key=len)
        h = Holder("Out[%s]" % n, "output of cell %s, kept by IPython's output cache%s" % (n, " (also as %s)" % ", ".join(also) if also else ""),
                   "%%gpumem free Out[%s]" % n)
        _walk(torch, value, h)
        holders.append(h)
    # The cell's own frame has the namespace as its locals (listed above), IPython's frames hold no tensors.
    frames = [f for f in _traceback_frames() if f.f_code.co_name != "<module>" and "IPython" not in f.f_code.co_filename]
    if frames:
        h = Holder("traceback", "locals of the last error's frames (%s), kept by sys.last_traceback" % ", ".join(f.f_code.co_name + "()" for f in frames),
                   "%gpumem free traceback")
        for f in frames:
            _walk(torch, dict(f.f_locals), h)
        holders.append(h)
    holders.extend(graphs)
    return sorted((h for h in holders if h.bytes > 0), key=lambda h: -h.bytes)


def _has_contents(cell):
    try:
        cell.cell_contents
        return True
    except ValueError:
        return False


def _is_optimizer(torch, value):
    optimizer = getattr(getattr(torch, "optim", None), "Optimizer", None)
    return isinstance(optimizer, type) and isinstance(value, optimizer) and isinstance(getattr(value, "state", None), dict)


def _kind(torch, value):
    if isinstance(value, torch.Tensor):
        return "tensor"
    if hasattr(value, "parameters") and callable(value.parameters):
        return "module (parameters and their gradients)"
    return type(value).__name__
