"""Lists the ops of one or more trace files: per op, the allocations, their bytes and dtypes (step 1 only, the
steady-state step). ``python bench/trace/zoo_ops.py TRACE.ndjson …``"""
import collections
import json
import sys


def main(paths):
    rows = collections.defaultdict(lambda: [0, 0, set()])
    for path in paths:
        for line in open(path, encoding="utf-8"):
            e = json.loads(line)
            if e.get("kind") == "alloc" and e.get("step") == 1:
                r = rows[(e["op"], e["phase"])]
                r[0] += 1
                r[1] += e["bytes"]
                r[2].add(e["dtype"])
    for (op, phase), (n, nbytes, dtypes) in sorted(rows.items(), key=lambda kv: -kv[1][1]):
        print("%-55s %-9s %5d %12d  %s" % (op, phase, n, nbytes, ",".join(sorted(dtypes))))


if __name__ == "__main__":
    main(sys.argv[1:])
