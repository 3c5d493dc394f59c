"""IPython/Jupyter extension: ``%load_ext gpumem_torch``.

- After every cell that changed GPU memory, one line per device: the cell's change in allocated memory, the
  peak inside the cell, and what is allocated and reserved now. To measure the peak of each cell, PyTorch's
  peak counters are reset when a cell starts (``torch.cuda.max_memory_allocated()`` then means "this cell").
- ``%gpumem`` (or ``%gpumem who``): what in the kernel holds GPU memory, hidden holders included (``_``,
  ``Out[n]``, the last error's traceback, closures, optimizer state, autograd graphs of kept losses), each with
  its bytes and how to drop it.
- ``%gpumem free NAME…``: drops those references, collects garbage, empties PyTorch's cache and says what came
  back, and for what did not, what still holds it.

It works whether or not gpumem started the kernel, and never imports torch itself: until the notebook imports
torch and uses CUDA there is nothing to report. See docs/notebooks.md.
"""
import gc
import sys
import traceback
import weakref

from ._format import format_bytes
from ._notebook_scan import reach, scan

_HELP = "usage: %gpumem [who] | %gpumem free NAME… (names: variables, _, __, ___, Out[N], _N, traceback)"


def _torch_cuda():
    """torch, when the notebook imported it and CUDA is initialised; else None (nothing allocated yet)."""
    torch = sys.modules.get("torch")
    try:
        if torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized():
            return torch
    except Exception:
        pass
    return None


def _counters(torch):
    if torch is None:
        return {}
    return {d: (int(torch.cuda.memory_allocated(d)), int(torch.cuda.memory_reserved(d))) for d in range(torch.cuda.device_count())}


def _signed(n):
    return ("+" if n > 0 else "") + format_bytes(n)


class _Extension:
    def __init__(self, shell):
        self.shell = shell
        self.before = {}
        self.quiet = False

    # -- after every cell -------------------------------------------------------------------------------------
    def pre_run_cell(self, info=None):
        # A %gpumem cell reports for itself; its own line would only repeat it.
        self.quiet = str(getattr(info, "raw_cell", "")).lstrip().startswith("%gpumem")
        torch = _torch_cuda()
        self.before = _counters(torch)
        for d in self.before:
            try:
                torch.cuda.reset_peak_memory_stats(d)
            except Exception:
                pass

    def post_run_cell(self, *_args):
        torch = _torch_cuda()
        if torch is None or self.quiet:
            return
        for d, (allocated, reserved) in _counters(torch).items():
            was_allocated, was_reserved = self.before.get(d, (0, 0))
            try:
                peak = int(torch.cuda.max_memory_allocated(d))
            except Exception:
                peak = allocated
            if allocated == was_allocated and reserved == was_reserved and peak <= was_allocated:
                continue
            print("gpumem: cuda:%d %s this cell (peak %s inside it) · now %s allocated, %s reserved" % (
                d, _signed(allocated - was_allocated), format_bytes(peak), format_bytes(allocated), format_bytes(reserved)))

    # -- %gpumem ------------------------------------------------------------------------------------------------
    def magic(self, line):
        words = line.split()
        if not words or words[0] == "who":
            return self.who()
        if words[0] == "free":
            if len(words) < 2:
                print(_HELP)
                return None
            return self.free(words[1:])
        print(_HELP)
        return None

    def who(self):
        torch = _torch_cuda()
        if torch is None:
            print("gpumem: no CUDA memory in this kernel (torch is not imported, or has not used CUDA yet)")
            return None
        holders = scan(torch, self.shell.user_ns)
        for d, (allocated, reserved) in _counters(torch).items():
            print("gpumem: cuda:%d %s allocated, %s reserved (%s of it cached, free to reuse)" % (
                d, format_bytes(allocated), format_bytes(reserved), format_bytes(reserved - allocated)))
        if not holders:
            print("no name in this kernel holds CUDA tensors")
            return None
        width = max(len(h.name) for h in holders)
        for h in holders:
            print("  %-*s  %10s  %s — drop: %s" % (width, h.name, format_bytes(h.bytes), h.what, h.drop))
        return None

    # -- %gpumem free ---------------------------------------------------------------------------------------
    def free(self, names):
        torch = _torch_cuda()
        before = _counters(torch)
        ns = self.shell.user_ns
        watched = {}
        for name in names:
            refs = self._tensor_refs(torch, name) if torch is not None else []
            problem = self._drop(name)
            if problem:
                print("gpumem: %s: %s" % (name, problem))
                continue
            watched[name] = refs
        gc.collect()
        if torch is not None:
            torch.cuda.empty_cache()
        after = _counters(torch)
        for d, (allocated, reserved) in after.items():
            was_allocated, was_reserved = before.get(d, (0, 0))
            print("gpumem: cuda:%d allocated %s → %s (%s), reserved %s → %s (%s)" % (
                d, format_bytes(was_allocated), format_bytes(allocated), _signed(allocated - was_allocated),
                format_bytes(was_reserved), format_bytes(reserved), _signed(reserved - was_reserved)))
        holders = scan(torch, ns) if torch is not None else []
        for name, refs in watched.items():
            alive = [r() for r in refs if r() is not None]
            if not alive:
                print("  %s: dropped; every tensor it held is freed" % name)
                continue
            ids = {id(t) for t in alive}
            still = [h for h in holders if any(id(t) in ids for t in h.tensors.values())]
            nbytes = sum(int(getattr(t, "nbytes", 0)) for t in alive)
            why = ", ".join("%s (%s)" % (h.name, h.drop) for h in still) if still else \
                "a reference with no name here (an attribute of another object, a module-level cache, another thread)"
            print("  %s: dropped, but %d tensor(s), %s, are still held by: %s" % (name, len(alive), format_bytes(nbytes), why))
        return None

    def _tensor_refs(self, torch, name):
        """Weak references to the CUDA tensors `name` keeps alive, to tell afterwards which were freed."""
        ns = self.shell.user_ns
        if name in ns and not name.startswith("Out"):
            tensors = list(reach(torch, ns[name]).tensors.values())
        else:  # Out[N], Out, traceback: the holders the scan names so
            tensors = [t for h in scan(torch, ns) if h.name == name or (name == "Out" and h.name.startswith("Out[")) for t in h.tensors.values()]
        refs = []
        for t in tensors:
            try:
                refs.append(weakref.ref(t))
            except TypeError:  # a tensor type without weak references: it cannot be followed, only freed
                pass
        return refs

    def _drop(self, name):
        """Removes the reference `name`; a problem in words, or None."""
        ns = self.shell.user_ns
        if name == "traceback":
            tb = getattr(sys, "last_traceback", None)
            if tb is not None:
                traceback.clear_frames(tb)
            for attr in ("last_type", "last_value", "last_traceback", "last_exc"):
                if hasattr(sys, attr):
                    setattr(sys, attr, None)
            result = getattr(self.shell, "last_execution_result", None)
            if result is not None:
                result.error_in_exec = None
            for handler in (getattr(self.shell, "InteractiveTB", None), getattr(self.shell, "SyntaxTB", None)):
                if handler is not None and hasattr(handler, "tb"):
                    handler.tb = None
            return None
        if name in ("_", "__", "___"):
            self._forget(ns.get(name), [name])
            return None
        if name == "Out" or (name.startswith("Out[") and name.endswith("]")) or (name.startswith("_") and name[1:].isdigit()):
            out = ns.get("_oh", {})
            keys = list(out) if name == "Out" else [name[4:-1] if name.startswith("Out[") else name[1:]]
            for key in keys:
                try:
                    value = out.pop(int(key))
                except (KeyError, ValueError):
                    return "no output %s in Out" % key
                self._forget(value, ["_%s" % key, "_", "__", "___"])
            return None
        if name.startswith("_") or name not in ns:
            return "no such name in this kernel"
        del ns[name]
        return None

    def _forget(self, value, names):
        """Drops every place IPython's output cache keeps `value` under `names`: the namespace, the hidden
        namespace (the display hook pushes `_`, `_N` there too), the display hook itself and the last result."""
        hook = self.shell.displayhook
        for space in (self.shell.user_ns, getattr(self.shell, "user_ns_hidden", {})):
            for name in names:
                if name in space and space[name] is value:
                    if name in ("_", "__", "___"):
                        space[name] = ""
                    else:
                        del space[name]
        for alias in ("_", "__", "___"):
            if getattr(hook, alias, None) is value:
                setattr(hook, alias, "")
        result = getattr(self.shell, "last_execution_result", None)
        if result is not None and getattr(result, "result", None) is value:
            result.result = None


def load_ipython_extension(shell):
    """Called by ``%load_ext gpumem_torch``."""
    if getattr(shell, "_gpumem_notebook", None) is not None:
        return
    ext = _Extension(shell)
    shell.events.register("pre_run_cell", ext.pre_run_cell)
    shell.events.register("post_run_cell", ext.post_run_cell)
    shell.register_magic_function(ext.magic, "line", "gpumem")
    shell._gpumem_notebook = ext


def unload_ipython_extension(shell):
    """Called by ``%unload_ext gpumem_torch``."""
    ext = getattr(shell, "_gpumem_notebook", None)
    if ext is None:
        return
    shell.events.unregister("pre_run_cell", ext.pre_run_cell)
    shell.events.unregister("post_run_cell", ext.post_run_cell)
    shell._gpumem_notebook = None
