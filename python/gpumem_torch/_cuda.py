"""Whether this process can use CUDA at all, and if not, the likely cause in one line.

Two stages, because asking torch (``torch.cuda.is_available()``) may initialise the CUDA driver, which breaks
programs that fork later: ``static_status`` looks only at the build, the environment and the driver's files,
and is safe at import; ``late_problem`` asks torch itself, and is only called when the program is ending
without ever having initialised CUDA.
"""
import os

from ._probe import _attr

# Files that exist when an NVIDIA driver is usable here: the Linux kernel module, its control device, and
# the device WSL uses instead of both. None of them present means no driver, whatever torch was built with.
_DRIVER_FILES = ("/proc/driver/nvidia/version", "/dev/nvidiactl", "/dev/dxg")


def _compiled(torch):
    """True/False when this torch says whether it was built with CUDA, None when it cannot tell."""
    built = _attr(torch, "backends.cuda.is_built")
    if callable(built):
        try:
            return bool(built())
        except Exception:
            pass
    version = _attr(torch, "version")
    if version is not None and hasattr(version, "cuda"):
        return version.cuda is not None
    return None


def hides_every_device(visible):
    """True when CUDA_VISIBLE_DEVICES shows no device: empty, or its first entry is not a device (e.g. -1)."""
    if visible is None:
        return False
    first = visible.split(",")[0].strip()
    return first == "" or first.startswith("-")


def _driver_loaded(files=_DRIVER_FILES):
    try:
        return any(os.path.exists(path) for path in files)
    except Exception:
        return None


def static_status(torch, environ=None, driver_files=_DRIVER_FILES):
    """What is known without touching CUDA: a dict for the hello message, its ``problem`` a cause or None."""
    env = os.environ if environ is None else environ
    compiled = _compiled(torch)
    visible = env.get("CUDA_VISIBLE_DEVICES")
    driver = _driver_loaded(driver_files)
    version = _attr(torch, "version.cuda")
    problem = None
    if compiled is False:
        problem = "this torch %s is a CPU-only build (not compiled with CUDA); install a CUDA build of torch" % (
            getattr(torch, "__version__", "?"),)
    elif hides_every_device(visible):
        problem = "CUDA_VISIBLE_DEVICES=%r hides every GPU from the program; unset it or name a GPU" % (visible,)
    elif compiled is True and driver is False:
        problem = "no NVIDIA driver is loaded on this machine (no /proc/driver/nvidia, /dev/nvidiactl or /dev/dxg)"
    return {
        "compiled": compiled,
        "cudaVersion": version if isinstance(version, str) else None,
        "visibleDevices": visible,
        "driverLoaded": driver,
        "problem": problem,
    }


def late_problem(torch, environ=None):
    """At exit of a program that never initialised CUDA: the cause when torch has no usable device, else None."""
    env = os.environ if environ is None else environ
    try:
        if bool(torch.cuda.is_available()) and int(torch.cuda.device_count()) > 0:
            return None
    except Exception as exc:
        return "torch.cuda.is_available() failed (%s: %s)" % (type(exc).__name__, str(exc)[:200])
    visible = env.get("CUDA_VISIBLE_DEVICES")
    if visible:
        return ("torch.cuda.is_available() is False with CUDA_VISIBLE_DEVICES=%r: it may name a GPU this machine "
                "does not have, or the driver is older than torch's CUDA %s" % (visible, _attr(torch, "version.cuda")))
    return ("torch.cuda.is_available() is False: the NVIDIA driver is missing or older than torch's CUDA %s"
            % (_attr(torch, "version.cuda"),))


def device_problem(torch, device):
    """Why ``device`` (None, an index, "cuda:N" or a torch.device) cannot be read now, or None when it can."""
    try:
        if not torch.cuda.is_available():
            status = static_status(torch)
            return status["problem"] or late_problem(torch) or "torch.cuda.is_available() is False"
        count = int(torch.cuda.device_count())
    except Exception as exc:
        return "torch.cuda cannot be queried (%s: %s)" % (type(exc).__name__, str(exc)[:200])
    index = _requested_index(device)
    if index is not None and not 0 <= index < count:
        return "cuda:%d is out of range: this process sees %d device%s" % (index, count, "" if count == 1 else "s")
    return None


def _requested_index(device):
    if device is None:
        return None
    if isinstance(device, int):
        return device
    # A str has an .index method, so only a torch.device is asked for its index attribute.
    index = None if isinstance(device, str) else getattr(device, "index", None)
    if index is not None:
        return int(index)
    text = str(device)
    if ":" in text:
        try:
            return int(text.split(":", 1)[1])
        except ValueError:
            return None
    return None
