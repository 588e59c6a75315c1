#!/usr/bin/env python3
"""The runs of tools/ranks-gpu.sh as JSON lines, one per example run, for the `report`
example's `--ranks` section of docs/performance.md.

Usage: tools/ranks-record.py OUT_DIR [OUT_DIR ...] > ranks.jsonl

Each OUT_DIR is a ranks-gpu.sh output folder: its `<algorithm>-<graph>-<run>.json` reports
and its summary.tsv (which says whether a run's output equalled the 1-device run's, was
validated, or, for a run under --memory-limit on 1 device, was refused cleanly). A later
folder's run of the same algorithm, graph and run replaces an earlier one's; a report that
the folder's summary.tsv does not list as run (left by an earlier invocation) is skipped,
and a run that exited non-zero is recorded with the check `exit N` (with its report's
times where it wrote one).
Exits 1 with
a message naming the file when a report cannot be read.
"""

import json
import os
import re
import sys

ALGORITHMS = ("bfs", "sssp", "cc", "pagerank")
# The run part of a step's name: one process of N devices, N ranks, or the memory-limit runs.
RUN = re.compile(r"^(?P<graph>.+?)-(?P<run>1process|\d+devices|\d+ranks|memlimit-\d+devices?)$")
REFUSED = re.compile(r"refused cleanly under (\d+) bytes \(1-device peak (\d+)\)")


def summary(summary_path):
    """Step name -> exit code of the steps summary.tsv lists as run (a row with an exit
    code), and step name -> what it says of the step's result (the last such row counts)."""
    ran, found = {}, {}
    if not os.path.exists(summary_path):
        return ran, found
    with open(summary_path) as f:
        for line in f:
            cells = line.rstrip("\n").split("\t")
            if len(cells) < 2:
                continue
            if cells[1].isdigit():
                ran[cells[0]] = int(cells[1])
            else:
                found[cells[0]] = cells[1]
    return ran, found


def split_step(step):
    """`bfs-kron25-2ranks` -> (algorithm, graph, run), or None for other steps."""
    algorithm, _, rest = step.partition("-")
    match = RUN.match(rest)
    if algorithm not in ALGORITHMS or not match:
        return None
    return algorithm, match["graph"], match["run"]


def record(step, report, check):
    record = bare_record(step)
    times = report.get("times") or {}
    timed = times.get("device_ms") or times.get("run_ms") or {}
    memory = report.get("memory") or {}
    peaks = [d.get("peak_bytes", 0) for d in memory.get("devices") or []]
    limits = [d.get("limit_bytes") for d in memory.get("devices") or [] if d.get("limit_bytes")]
    for rank in memory.get("ranks") or []:
        peaks += rank.get("device_peak_bytes") or []
    graph_info = report.get("graph") or {}
    execution = report.get("execution") or {}
    record.update({
        "spec": graph_info.get("name"),
        "vertices": graph_info.get("vertices"),
        "arcs": graph_info.get("arcs"),
        "gpu": ((report.get("devices") or [{}])[0]).get("name"),
        "backend": execution.get("backend"),
        "mode": execution.get("mode"),
        "median_ms": timed.get("median"),
        "min_ms": timed.get("min"),
        "max_ms": timed.get("max"),
        "repeats": timed.get("repeats"),
        "timer": "device events" if times.get("device_ms") else "host clock",
        # The bytes between ranks: the report's comm (the ring's items), or for an executor
        # that gathers values across the ranks instead, its own count in the detail.
        "comm_bytes": (report.get("comm") or {}).get("bytes",
                                                      (execution.get("detail") or {})
                                                      .get("bytes_between_ranks")),
        "device_peak_bytes": max(peaks) if peaks else None,
        "limit_bytes": limits[0] if limits else None,
        "check": check,
    })
    return record


def refusal(step, check):
    limit, peak = REFUSED.search(check).groups()
    return dict(bare_record(step), limit_bytes=int(limit), device_peak_bytes=int(peak),
                check="refused")


def main(dirs):
    if not dirs:
        sys.exit(__doc__.strip().split("\n\n")[1])
    runs = {}
    for out in dirs:
        ran, found = summary(os.path.join(out, "summary.tsv"))
        reported = set()
        for name in sorted(os.listdir(out)):
            step = name[: -len(".json")] if name.endswith(".json") else None
            # A report the folder's summary does not list is an earlier invocation's.
            if step is None or step not in ran or split_step(step) is None:
                continue
            path = os.path.join(out, name)
            try:
                with open(path) as f:
                    report = json.load(f)
            except (OSError, ValueError) as e:
                sys.exit(f"error: {path}: not an example's JSON report ({e})")
            check = found.get(step)
            if ran[step] != 0:
                check = f"exit {ran[step]}"
            runs[step] = record(step, report, check)
            reported.add(step)
        # A failed run that wrote no report still has its row, with its exit code.
        for step, code in ran.items():
            if code != 0 and step not in reported and split_step(step) and not step.endswith("memlimit-1device"):
                runs[step] = dict(bare_record(step), check=f"exit {code}")
        for step, check in found.items():
            if split_step(step) and REFUSED.search(check):
                runs[step] = refusal(step, check)
            elif split_step(step) and check.startswith("NOT REFUSED"):
                runs[step] = dict(bare_record(step), check=check)
    for step in sorted(runs):
        print(json.dumps(runs[step], sort_keys=True))


def shape(run):
    """(processes, devices per process) of a run, from its name."""
    count = int(re.search(r"\d+", run).group()) if re.search(r"\d+", run) else 1
    if run.endswith("ranks"):
        return count, 1
    if run == "1process":
        return 1, 1
    return 1, count


def bare_record(step):
    """The record of a run that left no report: which run it was, no times."""
    algorithm, graph, run = split_step(step)
    processes, devices = shape(run)
    return {"format": 1, "algorithm": algorithm, "graph": graph, "run": run,
            "processes": processes, "devices_per_process": devices}


if __name__ == "__main__":
    main(sys.argv[1:])
