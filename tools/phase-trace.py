#!/usr/bin/env python3
"""Summarises the fused traversal's phase trace (kernels/include/fused_phase_trace.cuh).

Run a BFS or SSSP example with the trace compiled in, e.g.

    GROUTE_NVRTC_OPTIONS=-DGROUTE_TRACE_PHASES \\
        cargo run --release --example sssp -- --graph G --devices 2 --repeat 1 > trace.txt

and pass its output here: per member (device) of the last traced run, the phases of each
kind, the time they ran, the time of their barrier actions (a device-driven member's idle
waits are there), the items they expanded and received and the hub tiles listed; with
--phases, every phase. Lines that the devices' prints interleaved are skipped. The trace's
prints take time after the run, not within it, but a traced run's own timer is not a
measurement: compare the phases, not the totals.
"""

import argparse
import collections
import sys

KINDS = {0: "DONE", 1: "EXPAND", 2: "SOLO", 3: "HUBS", 4: "REEXAMINE", 5: "STOP"}
FIELDS = ("member", "index", "kind", "run_ns", "action_ns", "items", "received", "hubs",
          "tiles", "wl_end", "sent", "low", "threshold", "levels")


def parse(lines):
    """The last traced run of every member: member -> (list of phases (dicts), the phases its
    end line says it kept, or None)."""
    runs = collections.defaultdict(list)
    kept = {}
    for line in lines:
        if line.startswith("phase-trace-end "):
            try:
                end = {k: int(v) for k, v in (w.split("=") for w in line.split()[1:])}
                kept[end["member"]] = end["kept"]
            except (ValueError, KeyError):
                pass
            continue
        if not line.startswith("phase-trace "):
            continue
        try:
            entry = {k: int(v) for k, v in (w.split("=") for w in line.split()[1:])}
        except ValueError:
            continue
        if tuple(entry) != FIELDS:
            continue  # interleaved with another device's line
        if entry["index"] == 0:
            runs[entry["member"]].append([])
        if runs[entry["member"]]:
            runs[entry["member"]][-1].append(entry)
    return {m: (r[-1], kept.get(m)) for m, r in runs.items() if r}


def summary(member, phases):
    total = sum(p["run_ns"] + p["action_ns"] for p in phases)
    print(f"member {member}: {len(phases)} phases, {total / 1e6:.2f} ms, "
          f"sent {phases[-1]['sent']}")
    kinds = collections.defaultdict(lambda: collections.Counter())
    for p in phases:
        c = kinds[KINDS.get(p["kind"], p["kind"])]
        c["n"] += 1
        c["run"] += p["run_ns"]
        c["action"] += p["action_ns"]
        c["items"] += p["items"]
        c["received"] += p["received"]
        if p["kind"] in (1, 2):
            c["tiles"] += p["tiles"]
    for kind, c in sorted(kinds.items()):
        print(f"  {kind:9s} {c['n']:5d} phases  run {c['run'] / 1e6:8.2f} ms  "
              f"actions {c['action'] / 1e6:7.2f} ms  items {c['items']:10d}  "
              f"received {c['received']:10d}  hub tiles listed {c['tiles']:8d}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("trace", nargs="?", help="the example's output (default: stdin)")
    ap.add_argument("--phases", action="store_true", help="list every phase too")
    args = ap.parse_args()
    lines = open(args.trace) if args.trace else sys.stdin
    members = parse(lines)
    if not members:
        sys.exit("no phase-trace lines: was the run built with -DGROUTE_TRACE_PHASES?")
    for member, (phases, kept) in sorted(members.items()):
        if kept is None or kept != len(phases):
            print(f"member {member}: {len(phases)} phase lines read, the run kept "
                  f"{'?' if kept is None else kept}: lines were lost or interleaved")
        summary(member, phases)
        if args.phases:
            for p in phases:
                print(f"    {p['index']:5d} {KINDS.get(p['kind'], p['kind']):9s} "
                      f"threshold {p['threshold']:6d}  run {p['run_ns'] / 1e3:9.1f} us  "
                      f"action {p['action_ns'] / 1e3:8.1f} us  items {p['items']:9d}  "
                      f"received {p['received']:9d}  hub tiles {p['tiles']:7d}  "
                      f"low list {p['low']:9d}")


if __name__ == "__main__":
    main()
