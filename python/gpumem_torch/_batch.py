"""What a batch and its DataLoader show: the batch size, token ids, the loader's settings, and the cores and batch
size the program runs with. Read once per fetch, so each is a few attribute reads."""
import os

def _first_dim(batch):
    """First dimension of the first tensor-like thing in the batch (tensor, list/tuple, dict), else None."""
    for _ in range(4):
        shape = getattr(batch, "shape", None)
        if shape is not None:
            try:
                return int(shape[0]) if len(shape) > 0 else None
            except Exception:
                return None
        if isinstance(batch, dict):
            batch = next(iter(batch.values()), None)
        elif isinstance(batch, (list, tuple)) and batch:
            batch = batch[0]
        else:
            return None
    return None


_TOKEN_DTYPES = frozenset(("torch.int64", "torch.int32", "torch.int16"))


def _tokens(batch):
    """Token ids in the batch: the elements of a 2-D integer tensor (``input_ids`` of a dict, else the batch's
    first tensor), padding included; None when the batch shows none."""
    if isinstance(batch, dict):
        t = batch.get("input_ids")
    else:
        t = batch
        for _ in range(3):
            if isinstance(t, (list, tuple)) and t:
                t = t[0]
            else:
                break
    shape = getattr(t, "shape", None)
    if shape is None or len(shape) != 2 or str(getattr(t, "dtype", "")) not in _TOKEN_DTYPES:
        return None
    return int(shape[0]) * int(shape[1])


def _setting(it, name, kind):
    value = getattr(it, name, None)
    if kind is bool:
        return value if isinstance(value, bool) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def loader_settings(it):
    """The DataLoader settings a torch iterator holds (num_workers, pin_memory as applied, …); None where absent."""
    return {
        "numWorkers": _setting(it, "_num_workers", int),
        "pinMemory": _setting(it, "_pin_memory", bool),
        "persistentWorkers": _setting(it, "_persistent_workers", bool),
        "prefetchFactor": _setting(it, "_prefetch_factor", int),
    }


def cpu_count():
    """Cores this process may run on (its affinity), else the machine's, else None."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count()


def asked_batch(environ=os.environ):
    """The batch size `gpumem run --batch` asked for (GPUMEM_BATCH), or None."""
    try:
        value = int(environ.get("GPUMEM_BATCH", ""))
        return value if value > 0 else None
    except ValueError:
        return None
