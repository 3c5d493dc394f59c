"""Runs a callback right after ``torch`` finishes importing, without importing torch ourselves.

A finder placed first on ``sys.meta_path`` asks the other finders for torch's spec and wraps that spec's
loader so our callback runs after torch's ``__init__``. The finder removes itself after the first hit, so
it costs one string comparison per import until then.
"""
import sys

TARGET = "torch"


class _PostImportFinder:
    """Meta-path finder that only ever acts on the one module named ``TARGET``."""

    def __init__(self, callback):
        self.callback = callback
        self.busy = False

    def find_spec(self, fullname, path=None, target=None):
        if fullname != TARGET or self.busy:
            return None
        self.busy = True
        try:
            spec = _find_with_others(self, fullname, path, target)
        finally:
            self.busy = False
        _remove(self)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        _wrap_loader(spec.loader, self.callback)
        return spec


def _find_with_others(me, fullname, path, target):
    for finder in list(sys.meta_path):
        if finder is me or not hasattr(finder, "find_spec"):
            continue
        spec = finder.find_spec(fullname, path, target)
        if spec is not None:
            return spec
    return None


def _remove(finder):
    try:
        sys.meta_path.remove(finder)
    except ValueError:
        pass


def _wrap_loader(loader, callback):
    original = loader.exec_module

    def exec_module(module):
        # The instance attribute shadows the class method once; drop it before running torch's own code.
        try:
            del loader.exec_module
        except AttributeError:
            pass
        original(module)
        if getattr(module, "__name__", None) == TARGET:
            _run_guarded(callback, module)

    try:
        loader.exec_module = exec_module
    except (AttributeError, TypeError):
        pass


def _run_guarded(callback, module):
    try:
        callback(module)
    except Exception as exc:
        try:
            sys.stderr.write("gpumem companion: not active (%s: %s); the program continues without it\n"
                             % (type(exc).__name__, exc))
        except Exception:
            pass


def install(callback):
    """Arranges for ``callback(torch_module)`` after torch is imported (at once if it already is)."""
    if TARGET in sys.modules:
        _run_guarded(callback, sys.modules[TARGET])
        return
    sys.meta_path.insert(0, _PostImportFinder(callback))


def install_companion():
    """The hook sitecustomize installs: start the companion when torch arrives."""
    def start(torch):
        from ._companion import activate
        activate(torch)

    install(start)
