#!/usr/bin/env python3
"""A small wall-clock harness, used when hyperfine is not installed.

usage: timeit.py RUNS WARMUP NAME=COMMAND [NAME=COMMAND ...]

Runs each command (argv split on spaces, no shell) WARMUP times, then RUNS times, alternating
the commands in each round so both see the same machine load; prints mean, standard deviation
and min wall time per command, as `NAME mean_ms sd_ms min_ms` lines. Output of the commands is
discarded; exit codes are ignored (a lint run with findings exits with 1).
"""
import statistics
import subprocess
import sys
import time


def once(argv):
    t = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return (time.perf_counter() - t) * 1000.0


def main() -> int:
    runs, warmup = int(sys.argv[1]), int(sys.argv[2])
    cmds = [arg.split("=", 1) for arg in sys.argv[3:]]
    cmds = [(name, cmd.split()) for name, cmd in cmds]
    for _ in range(warmup):
        for _, argv in cmds:
            once(argv)
    times = {name: [] for name, _ in cmds}
    for _ in range(runs):
        for name, argv in cmds:
            times[name].append(once(argv))
    for name, ts in times.items():
        sd = statistics.stdev(ts) if len(ts) > 1 else 0.0
        print(f"{name} {statistics.mean(ts):.2f} {sd:.2f} {min(ts):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
