"""Reading the caching allocator's statistics into the companion's message fields.

Everything here reads host-side allocator counters only; nothing initialises CUDA or touches a device that
the program has not used, so calling it from a background thread is safe.
"""
from ._probe import STAT_KEYS


def cuda_ready(torch):
    """True once the program itself has initialised CUDA (we never initialise it on its behalf)."""
    try:
        return bool(torch.cuda.is_initialized())
    except Exception:
        return False


def device_count(torch):
    """Number of devices this process sees (after CUDA_VISIBLE_DEVICES), 0 when it cannot tell."""
    try:
        return int(torch.cuda.device_count())
    except Exception:
        return 0


def device_stats(torch, device):
    """Allocator statistics of one device as a message dict; a key this torch does not report becomes None.

    Values are exactly those of ``torch.cuda.memory_stats(device)``: allocated/active are sums of block sizes
    (rounded to 512 B), reserved is the sum of segments obtained from cudaMalloc.
    """
    raw = torch.cuda.memory_stats(device)
    out = {"device": int(device)}
    for field, key in STAT_KEYS:
        value = raw.get(key)
        out[field] = int(value) if value is not None else None
    return out


def all_device_stats(torch):
    """Statistics of every visible device, or [] before CUDA is initialised."""
    if not cuda_ready(torch):
        return []
    return [device_stats(torch, d) for d in range(device_count(torch))]


def _uuid_text(props):
    uuid = getattr(props, "uuid", None)
    if uuid is None:
        return None
    text = str(uuid)
    # torch prints the bare UUID; NVML and nvidia-smi prefix it, and the supervisor matches on that form.
    if not text.startswith(("GPU-", "MIG-")):
        text = "GPU-" + text
    return text


def device_identities(torch):
    """Index → UUID, name and total memory for each visible device, so ordinals map onto NVML devices."""
    found = []
    for d in range(device_count(torch)):
        entry = {"device": d, "uuid": None, "name": None, "totalBytes": None}
        try:
            props = torch.cuda.get_device_properties(d)
            entry["uuid"] = _uuid_text(props)
            entry["name"] = getattr(props, "name", None)
            total = getattr(props, "total_memory", None)
            entry["totalBytes"] = int(total) if total is not None else None
        except Exception:
            pass
        found.append(entry)
    return found
