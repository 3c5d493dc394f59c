"""What grows: the allocation sites whose live memory rose between two points of the loop, from the allocator's
own records (``torch.cuda.memory._snapshot()``: live blocks with the Python frames that allocated them).

Only while allocation history is recorded (``gpumem run --snapshot-on-oom`` turns it on), and only at steps 32,
64, 128, … (each power of two): a snapshot walks every block, so it is taken a handful of times per run, never
per step. Between two such steps, a site is reported when its live bytes rose while what the steps left behind
rose too — the tensors a leak keeps, e.g. the graph of ``total += loss``.
"""
import os

FIRST_STEP = 32
MAX_SITES = 5


def _own_dirs(torch):
    dirs = [os.path.dirname(os.path.abspath(__file__))]
    path = getattr(torch, "__file__", None)
    if path:
        dirs.append(os.path.dirname(os.path.abspath(path)))
    return tuple(d + os.sep for d in dirs)


def site_of(frames, skip):
    """The innermost frame outside torch and gpumem, as "file:line in function"; None without frames."""
    for f in frames or ():
        name = str(f.get("filename", ""))
        if not name or name.startswith(skip) or name.startswith("<frozen"):
            continue
        return "%s:%s in %s" % (name, f.get("line", "?"), f.get("name", "?"))
    return None


def live_by_site(snapshot, device, skip):
    """Live (allocated) bytes and block counts per allocation site on ``device``."""
    out = {}
    for segment in snapshot.get("segments", ()):
        if segment.get("device") != device:
            continue
        for block in segment.get("blocks", ()):
            if block.get("state") != "active_allocated":
                continue
            site = site_of(block.get("frames"), skip)
            if site is None:
                continue
            entry = out.setdefault(site, [0, 0])
            entry[0] += int(block.get("size", 0))
            entry[1] += 1
    return out


def grown_sites(before, after, limit=MAX_SITES):
    """Sites whose live bytes rose from ``before`` to ``after``, largest rise first."""
    rises = []
    for site, (size, blocks) in after.items():
        old_size, old_blocks = before.get(site, (0, 0))
        if size > old_size:
            rises.append({"site": site, "bytes": size - old_size, "blocks": blocks - old_blocks})
    rises.sort(key=lambda r: -r["bytes"])
    return rises[:limit]


class SiteTracker:
    """Snapshots at steps 32, 64, 128, …; ``check`` returns a ``sites`` message when something grew."""

    def __init__(self, torch):
        self.torch = torch
        self.skip = _own_dirs(torch)
        self.next_step = FIRST_STEP
        self.previous = None  # (step, left bytes, live by site)

    def due(self, step):
        return step >= self.next_step

    def check(self, step, device, left):
        while self.next_step <= step:
            self.next_step *= 2
        live = live_by_site(self.torch.cuda.memory._snapshot(), device, self.skip)
        previous, self.previous = self.previous, (step, left, live)
        if previous is None or left <= previous[1]:
            return None
        sites = grown_sites(previous[2], live)
        if not sites:
            return None
        return {"type": "sites", "device": int(device), "fromStep": previous[0], "toStep": step,
                "leftGrewBytes": int(left - previous[1]), "sites": sites}
