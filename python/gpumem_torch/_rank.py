"""Which rank of a distributed job this process is, for the supervisor's per-rank report.

Two sources, sent as ``rank`` messages (docs/companion.md): the environment a launcher gives each rank
(torchrun, accelerate and deepspeed set RANK, LOCAL_RANK and WORLD_SIZE), sent at start; and
``torch.distributed`` once the process group exists, which also knows the backend and is the only source for
``mp.spawn`` ranks (their environment names no rank). ``init_process_group`` is wrapped so the second message
goes out as soon as the group is up; the exit hook asks again for programs that created the group some other way.
"""
import os


def _int_or_none(text):
    try:
        value = int(str(text).strip())
    except (TypeError, ValueError):
        return None
    return value if value >= 0 else None


def from_environment(environ=None):
    """The rank message fields from RANK / LOCAL_RANK / WORLD_SIZE, or None when none is set."""
    env = os.environ if environ is None else environ
    rank = _int_or_none(env.get("RANK"))
    local = _int_or_none(env.get("LOCAL_RANK"))
    world = _int_or_none(env.get("WORLD_SIZE"))
    if rank is None and local is None and world is None:
        return None
    return {"source": "env", "rank": rank, "localRank": local, "worldSize": world, "backend": None}


def from_process_group(torch):
    """The rank message fields from an initialised ``torch.distributed``, or None when there is no group yet."""
    dist = getattr(torch, "distributed", None)
    if dist is None or not dist.is_available() or not dist.is_initialized():
        return None
    try:
        backend = str(dist.get_backend())
    except Exception:
        backend = None
    local = _int_or_none(os.environ.get("LOCAL_RANK"))
    return {"source": "torch.distributed", "rank": int(dist.get_rank()), "localRank": local,
            "worldSize": int(dist.get_world_size()), "backend": backend}


class RankReporter:
    """Sends each distinct rank fact once: the environment's at start, the process group's when it appears."""

    def __init__(self, torch, send):
        self.torch = torch
        self.send = send
        self.sent = []

    def _send(self, fields):
        if fields is None or fields in self.sent:
            return
        self.sent.append(fields)
        message = {"type": "rank"}
        message.update(fields)
        self.send(message)

    def start(self):
        self._send(from_environment())
        self.check()

    def check(self):
        """Sends the process group's view when it exists and was not sent yet."""
        self._send(from_process_group(self.torch))

    def wrap_init(self):
        """Wraps ``torch.distributed.init_process_group`` so the group's rank is sent right after it returns."""
        dist = getattr(self.torch, "distributed", None)
        original = getattr(dist, "init_process_group", None) if dist is not None else None
        if original is None or getattr(original, "_gpumem_wrapped", False):
            return
        reporter = self

        def init_process_group(*args, **kwargs):
            result = original(*args, **kwargs)
            try:
                reporter.check()
            except Exception:
                pass
            return result

        init_process_group._gpumem_wrapped = True
        init_process_group.__wrapped__ = original
        init_process_group.__doc__ = getattr(original, "__doc__", None)
        dist.init_process_group = init_process_group
