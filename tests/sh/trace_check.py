#!/usr/bin/env python3
# trace_check.py: a small validator of the Chrome trace event format, as accelctl writes
# it (issue 22): every event has ph, ts, pid and tid; the slices of a track nest (one
# ends before the next starts, or holds it whole); timestamps do not go back on a track.
# With --releases MS: every barrier's slices end (its release) on every node within MS of
# each other, on the median over the barriers, and within 10 x MS at most (a broadcast,
# --wait or main-first releases a node that comes after its source at its own arrival,
# and a node's own collective when its source is done: not moments the nodes share).
# Prints what it found; exits 1 with the first failure.
import json
import statistics
import sys


def fail(msg):
    print("trace_check: " + msg)
    sys.exit(1)


def main():
    args = sys.argv[1:]
    rel_ms = None
    if args[:1] == ["--releases"]:
        rel_ms = float(args[1])
        args = args[2:]
    with open(args[0]) as f:
        data = json.load(f)
    events = data["traceEvents"] if isinstance(data, dict) else data
    tracks = {}
    for i, e in enumerate(events):
        for k in ("ph", "ts", "pid", "tid"):
            if k not in e:
                fail("event %d has no %s: %r" % (i, k, e))
        if e["ph"] == "X":
            if "dur" not in e or e["dur"] < 0:
                fail("slice %d has no duration: %r" % (i, e))
            tracks.setdefault((e["pid"], e["tid"]), []).append(e)
    for t, evs in tracks.items():
        stack = []
        last = None
        for e in evs:
            if last is not None and e["ts"] < last:
                fail("track %r goes back in time at %r" % (t, e))
            last = e["ts"]
            while stack and stack[-1] <= e["ts"]:
                stack.pop()
            end = e["ts"] + e["dur"]
            if stack and end > stack[-1]:
                fail("track %r: %r overlaps the slice around it" % (t, e))
            stack.append(end)
    print("events %d, tracks %d, slices %d" % (len(events), len(tracks),
          sum(len(v) for v in tracks.values())))
    if rel_ms is None:
        return
    rel = {}
    for evs in tracks.values():
        for e in evs:
            if e["args"]["key"][:2] not in ("b:", "k:") or e["args"].get("scope") == "node":
                continue
            k = (e["args"]["key"], e["args"]["gen"])
            node = rel.setdefault(k, {})
            node[e["pid"]] = max(node.get(e["pid"], 0), e["ts"] + e["dur"])
    spreads = [(max(v.values()) - min(v.values())) / 1000.0
               for v in rel.values() if len(v) > 1]
    if not spreads:
        fail("no barrier shared by two nodes")
    med, top = statistics.median(spreads), max(spreads)
    print("releases across nodes, %d barriers: spread median %.3f ms, max %.3f ms"
          % (len(spreads), med, top))
    if med > rel_ms or top > 10 * rel_ms:
        fail("releases not aligned within %g ms (median %.3f, max %.3f)"
             % (rel_ms, med, top))


main()
