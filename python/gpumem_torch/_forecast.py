"""The OOM forecast inside the training process, for the trainer callbacks: the same history and the same
reading as gpumem's core (src/core/forecast/history.ts and forecast.ts), so a callback logs the numbers
``gpumem run`` shows. Constants and arithmetic mirror those files; a test feeds both the same steps.
"""
import collections
import math

RECENT_STEPS = 1024
THINNED_STEPS = 1024
MAX_SPIKES = 64
WARMUP_STEPS = 3
SPIKE_MIN_BYTES = 32 * 1024 * 1024
SPIKE_MIN_SHARE = 0.1
MIN_GROWTH_STEPS = 20
MIN_GROWN_BYTES = 1024 * 1024
MIN_R2 = 0.8


def _round(x):
    return math.floor(x + 0.5)  # JavaScript's Math.round, not Python's round-half-even


def is_spike(peak, usual):
    return usual is not None and peak - usual > max(SPIKE_MIN_BYTES, SPIKE_MIN_SHARE * usual)


class History:
    """Per-step memory of one device, bounded: the latest steps, older ones thinned, spike events apart."""

    def __init__(self, device=0, boundary="optimizer"):
        self.device = device
        self.boundary = boundary
        self.last_step = 0
        self.recent = collections.deque()
        self.thinned = []
        self.stride = 1
        self.spikes = []
        self.usual = None
        self.max_peak_allocated = 0
        self.max_peak_reserved = 0

    def add(self, step, left, peak_allocated, reserved, peak_reserved):
        if step <= self.last_step:
            return
        self.last_step = step
        self.max_peak_allocated = max(self.max_peak_allocated, peak_allocated)
        self.max_peak_reserved = max(self.max_peak_reserved, peak_reserved)
        record = (step, left, peak_allocated, reserved, peak_reserved)
        self._note_spike(record)
        self.recent.append(record)
        if len(self.recent) > RECENT_STEPS:
            self._thin(self.recent.popleft())

    def _thin(self, r):
        if r[0] % self.stride:
            return
        self.thinned.append(r)
        if len(self.thinned) > THINNED_STEPS:
            self.stride *= 2
            self.thinned = [x for x in self.thinned if x[0] % self.stride == 0]

    def _note_spike(self, r):
        step, _, peak, _, peak_reserved = r
        if step <= WARMUP_STEPS or not is_spike(peak, self.usual):
            self.usual = peak
            return
        last = self.spikes[-1] if self.spikes else None
        if last is not None and last["lastStep"] == step - 1:
            last["lastStep"] = step
            last["peakAllocatedBytes"] = max(last["peakAllocatedBytes"], peak)
            last["peakReservedBytes"] = max(last["peakReservedBytes"], peak_reserved)
        else:
            self.spikes.append({"firstStep": step, "lastStep": step, "peakAllocatedBytes": peak,
                                "peakReservedBytes": peak_reserved, "usualPeakBytes": self.usual})
            if len(self.spikes) > MAX_SPIKES:
                self.spikes.pop(0)

    def kept(self):
        return self.thinned + list(self.recent)


def _fit(points):
    n = len(points)
    mx = sum(p[0] for p in points) / n
    my = sum(p[1] for p in points) / n
    sxx = sxy = syy = 0.0
    for p in points:
        sxx += (p[0] - mx) ** 2
        sxy += (p[0] - mx) * (p[1] - my)
        syy += (p[1] - my) ** 2
    slope = sxy / sxx if sxx > 0 else 0.0
    r2 = (sxy * sxy) / (sxx * syy) if syy > 0 else 0.0
    return slope, r2


def _growth(h, limit):
    start = max(WARMUP_STEPS, h.last_step // 2)
    points = [r for r in h.kept() if r[0] > start and not any(e["firstStep"] <= r[0] <= e["lastStep"] for e in h.spikes)]
    if len(points) < MIN_GROWTH_STEPS:
        return None
    slope, r2 = _fit(points)
    first, last = points[0], points[-1]
    grown = slope * (last[0] - first[0])
    quarter = max(1, len(points) // 4)
    mean = lambda xs: sum(p[1] for p in xs) / len(xs)  # noqa: E731
    rose = mean(points[-quarter:]) > mean(points[:quarter])
    if slope <= 0 or r2 < MIN_R2 or grown < MIN_GROWN_BYTES or not rose:
        return None
    usual = h.usual if h.usual is not None else last[2]
    steps_left = None if limit is None else max(0, math.ceil((limit - usual) / slope))
    return {"bytesPerStep": slope, "sinceStep": first[0], "grownBytes": _round(grown), "r2": r2,
            "oomAtStep": None if steps_left is None else h.last_step + steps_left, "stepsLeft": steps_left}


def _period(events):
    starts = [e["firstStep"] for e in events[-5:]]
    if len(starts) < 2:
        return None
    gaps = [b - a for a, b in zip(starts, starts[1:])]
    median = sorted(gaps)[len(gaps) // 2]
    tolerance = max(1, _round(0.02 * median))
    return median if all(abs(g - median) <= tolerance for g in gaps) else None


def _spikes(h, growth, limit):
    every = _period(h.spikes)
    if every is None:
        return None
    recent = h.spikes[-5:]
    last = recent[-1]
    nxt = last["firstStep"] + every
    while nxt <= h.last_step:
        nxt += every
    peak = max(e["peakAllocatedBytes"] for e in recent)
    rate = growth["bytesPerStep"] if growth else 0
    peak_at = lambda step: _round(peak + rate * (step - last["firstStep"]))  # noqa: E731
    next_peak = peak_at(nxt)
    if h.usual is not None and not is_spike(next_peak, h.usual):
        return None
    fails = None
    if limit is not None and (next_peak > limit or rate > 0):
        fails = nxt if next_peak > limit else nxt + max(0, math.ceil((last["firstStep"] + (limit - peak) / rate - nxt) / every)) * every
        while peak_at(fails) <= limit:
            fails += every
        while fails - every >= nxt and peak_at(fails - every) > limit:
            fails -= every
    return {"everySteps": every, "seen": len(recent), "lastStep": last["firstStep"], "nextStep": nxt, "peakBytes": peak,
            "nextPeakBytes": next_peak, "headroomBytes": None if limit is None else limit - next_peak,
            "failsAtStep": fails, "failsAtPeakBytes": None if fails is None else peak_at(fails)}


def forecast(h, limit, within_steps=1000, check_spikes=True):
    """The forecast as a dict in the run report's field names; None before any step."""
    if not h.recent:
        return None
    growth = _growth(h, limit)
    spikes = _spikes(h, growth, limit)
    warnings = []
    if growth is not None and growth["stepsLeft"] is not None and growth["stepsLeft"] <= within_steps:
        warnings.append("growth")
    fails = spikes["failsAtStep"] if spikes is not None else None
    if check_spikes and fails is not None and (fails == spikes["nextStep"] or fails - h.last_step <= within_steps):
        warnings.append("spike")
    return {"device": h.device, "boundary": h.boundary, "step": h.last_step, "leftBytes": h.recent[-1][1],
            "usualPeakBytes": h.usual, "maxPeakAllocatedBytes": h.max_peak_allocated,
            "maxPeakReservedBytes": h.max_peak_reserved, "limitBytes": limit, "growth": growth, "spikes": spikes,
            "warnings": warnings}
