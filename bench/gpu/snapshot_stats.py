"""Torch's own view of a memory snapshot, to hold `gpumem snapshot --json` against (issue 8): the segment
fields PyTorch itself records (total/allocated/active/requested size), block sums by state, the totals of
torch.cuda._memory_viz.segsum (its text kept verbatim when torch is importable), and trace event counts by
action per device.

    python3 snapshot_stats.py SNAPSHOT.pickle --out SNAPSHOT.torch-stats.json
    python3 snapshot_stats.py --compare SNAPSHOT.torch-stats.json SNAPSHOT.gpumem.json --out verdict.json

The first form calls pickle.load: use it only on snapshots this machine wrote (gpumem never does that).
Needs the standard library only; torch adds the segsum text. --compare exits 1 on any difference.
"""
import argparse
import collections
import json
import pickle
import re
import sys


def torch_stats(data):
    if isinstance(data, list):  # the oldest format: a bare list of segments
        data = {"segments": data, "device_traces": []}
    devices = sorted({s["device"] for s in data["segments"]} | set(range(len(data.get("device_traces") or []))))
    out = {}
    for d in devices:
        segs = [s for s in data["segments"] if s["device"] == d]
        states = collections.defaultdict(lambda: {"count": 0, "bytes": 0})
        segsum_allocated = 0
        by_type = collections.defaultdict(lambda: {"count": 0, "bytes": 0})
        for s in segs:
            by_type[s.get("segment_type", "?")]["count"] += 1
            by_type[s.get("segment_type", "?")]["bytes"] += s["total_size"]
            for b in s["blocks"]:
                states[b["state"]]["count"] += 1
                states[b["state"]]["bytes"] += b["size"]
                if b["state"] == "active_allocated":
                    segsum_allocated += b.get("requested_size", b["size"])  # what _memory_viz.segsum counts
        has_requested = all("requested_size" in s for s in segs)
        traces = (data.get("device_traces") or [])
        trace = traces[d] if d < len(traces) else []
        out[str(d)] = {
            "segmentCount": len(segs),
            "blockCount": sum(len(s["blocks"]) for s in segs),
            "reservedBytes": sum(s["total_size"] for s in segs),
            "segmentAllocatedBytes": sum(s["allocated_size"] for s in segs),
            "segmentActiveBytes": sum(s["active_size"] for s in segs),
            "segmentRequestedBytes": sum(s["requested_size"] for s in segs) if has_requested else None,
            "blocksByState": dict(states),
            "segmentsByType": dict(by_type),
            "segsumAllocatedBytes": segsum_allocated,
            "traceEventCount": len(trace),
            "traceActions": dict(collections.Counter(e["action"] for e in trace)),
        }
    result = {"schemaVersion": 1, "kind": "gpumem.gpu-check.torch-snapshot-stats", "devices": out}
    try:
        from torch.cuda import _memory_viz
        text = _memory_viz.segsum(data)
        result["segsum"] = text
        m = re.search(r"^segments: (\d+)$", text, re.M)
        result["segsumSegments"] = int(m.group(1)) if m else None
    except Exception as e:  # no torch here, or a torch whose segsum differs: the numbers above still stand
        result["segsumError"] = f"{type(e).__name__}: {e}"
    return result


def compare(torch_side, ours):
    checks = []

    def eq(what, a, b):
        checks.append({"check": what, "gpumem": a, "torch": b, "ok": a == b})

    for dev in ours["devices"]:
        t = torch_side["devices"].get(str(dev["device"]))
        if t is None:
            checks.append({"check": f"device {dev['device']} present in torch stats", "ok": False})
            continue
        s, d = dev["summary"], dev["device"]
        eq(f"device {d} segments", s["segmentCount"], t["segmentCount"])
        eq(f"device {d} blocks", s["blockCount"], t["blockCount"])
        eq(f"device {d} reserved = sum(segment.total_size)", s["reservedBytes"], t["reservedBytes"])
        eq(f"device {d} allocated = sum(segment.allocated_size)", s["allocatedBytes"], t["segmentAllocatedBytes"])
        eq(f"device {d} allocated = active_allocated blocks", s["allocatedBytes"], t["blocksByState"].get("active_allocated", {}).get("bytes", 0))
        eq(f"device {d} active = sum(segment.active_size)", s["activeBytes"], t["segmentActiveBytes"])
        if t["segmentRequestedBytes"] is not None:
            eq(f"device {d} requested = sum(segment.requested_size)", s["requestedBytes"], t["segmentRequestedBytes"])
        eq(f"device {d} pending free", s["pendingFreeBytes"], t["blocksByState"].get("active_pending_free", {}).get("bytes", 0))
        eq(f"device {d} inactive", s["inactiveBytes"], t["blocksByState"].get("inactive", {}).get("bytes", 0))
        if dev.get("trace") is not None or t["traceEventCount"]:
            tr = dev.get("trace") or {}
            eq(f"device {d} trace events", tr.get("eventCount"), t["traceEventCount"])
            eq(f"device {d} trace actions", tr.get("actions"), t["traceActions"])
    if torch_side.get("segsumSegments") is not None:
        eq("all devices: segments vs _memory_viz.segsum", sum(x["summary"]["segmentCount"] for x in ours["devices"]), torch_side["segsumSegments"])
    return checks


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("snapshot", nargs="?")
    ap.add_argument("--compare", nargs=2, metavar=("TORCH_STATS", "GPUMEM_JSON"))
    ap.add_argument("--out")
    a = ap.parse_args()
    if a.compare:
        torch_side, ours = (json.load(open(p)) for p in a.compare)
        checks = compare(torch_side, ours)
        result = {"schemaVersion": 1, "kind": "gpumem.gpu-check.snapshot-compare", "files": a.compare,
                  "ok": all(c["ok"] for c in checks), "checks": checks}
        for c in checks:
            if not c["ok"]:
                print(f"MISMATCH {c['check']}: gpumem {c.get('gpumem')} vs torch {c.get('torch')}", file=sys.stderr)
        print(f"{'OK' if result['ok'] else 'MISMATCH'}: {len(checks)} checks ({a.compare[1]})")
    elif a.snapshot:
        with open(a.snapshot, "rb") as handle:
            result = torch_stats(pickle.load(handle))
        print(f"{a.snapshot}: " + ", ".join(f"device {d}: {v['segmentCount']} segments, {v['reservedBytes']} B reserved, "
                                           f"{v['traceEventCount']} trace events" for d, v in result["devices"].items()))
    else:
        ap.error("give a snapshot, or --compare")
    if a.out:
        with open(a.out, "w") as handle:
            json.dump(result, handle, indent=2)
    sys.exit(0 if result.get("ok", True) else 1)


if __name__ == "__main__":
    main()
