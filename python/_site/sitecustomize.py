"""gpumem's sitecustomize, put first on PYTHONPATH by ``gpumem run``.

It does two things and nothing else: when gpumem asked for the companion (GPUMEM_COMPANION_CHANNEL is set)
it arranges for the companion to start right after ``import torch`` (torch itself is not imported here);
then it runs the sitecustomize that Python would have run without gpumem, if there is one.
"""
import os
import sys


def _gpumem_here():
    return os.path.realpath(os.path.dirname(os.path.abspath(__file__)))


def _gpumem_install():
    tracing = bool(os.environ.get("GPUMEM_ESTIMATE_TRACE"))
    if not os.environ.get("GPUMEM_COMPANION_CHANNEL") and not tracing:
        return
    if tracing:
        # gpumem estimate: the program runs on fake tensors, so the live companion has nothing to watch.
        _gpumem_install_tracer()
        return
    try:
        _gpumem_import_own()
        from gpumem_torch._import_hook import install_companion
        install_companion()
    except Exception as exc:
        sys.stderr.write("gpumem companion: not active (%s: %s); the program continues without it\n"
                         % (type(exc).__name__, exc))


def _gpumem_import_own():
    # The companion must be the one that ships with this gpumem (it speaks its protocol): a gpumem_torch
    # installed elsewhere, or earlier on PYTHONPATH, is another version. Our folder goes first for this one
    # import and last afterwards, so no other module name resolves differently; the program's own
    # ``import gpumem_torch`` then gets this same package (its submodules load from its folder).
    root = os.path.dirname(_gpumem_here())
    sys.path.insert(0, root)
    try:
        import gpumem_torch
    finally:
        sys.path.remove(root)
    if root not in sys.path:
        sys.path.append(root)
    loaded = os.path.realpath(os.path.dirname(gpumem_torch.__file__ or ""))
    if loaded != os.path.realpath(os.path.join(root, "gpumem_torch")):
        raise ImportError("gpumem_torch was already imported from %s" % loaded)


def _gpumem_install_tracer():
    try:
        _gpumem_import_own()
        from gpumem_torch.trace import install
        install()
    except Exception as exc:
        # Untraced, the program would train for real (on the GPU, where there is one) and gpumem estimate would
        # have no step to read: one line says why, and the process ends before the program's first line.
        text = str(exc).strip().splitlines()
        sys.stderr.write("gpumem estimate: the tracer could not be installed (%s: %s)\n"
                         % (type(exc).__name__, text[0][:300] if text else ""))
        sys.stderr.flush()
        os._exit(3)


def _gpumem_chain():
    # Find the next sitecustomize on the path, skipping this folder, and run it under the usual name so
    # that it behaves (and fails) exactly as it would have without gpumem.
    import importlib.machinery
    import importlib.util

    here = _gpumem_here()
    paths = [p for p in sys.path if os.path.realpath(p or os.getcwd()) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", paths)
    if spec is None or spec.loader is None:
        return
    ours = sys.modules.get("sitecustomize")
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        if ours is not None:
            sys.modules["sitecustomize"] = ours
        raise


_gpumem_install()
_gpumem_chain()
