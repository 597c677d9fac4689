"""What a sweep costs, from its records: learner hours, and the wall time on k machines.

Usage: python benchmarks/sweep_time.py DIR [DIR ...] [--match TEXT] [--machines 1 2 4 8] [--workers 2]

Each current record's learner time is its construction plus every round
(``experiments.report.trial_hours``; the adversary's time is excluded, so these are lower bounds).
The wall time on ``k`` machines of ``--workers`` one-thread workers each is the
longest-job-first schedule of those times ([Graham1969]; ``experiments.report.makespan``), never
below the longest trial: a trial runs on one worker from start to end (its snapshots let it move,
not split). ``--match`` keeps the records whose key contains TEXT (e.g. ``s4-matern32``).
"""

from __future__ import annotations

import argparse

from torch_advbandit.experiments.report import makespan, trial_hours
from torch_advbandit.experiments.store import RecordStore


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", help="results folders")
    parser.add_argument("--match", default="", help="only records whose key contains this text")
    parser.add_argument("--machines", type=int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("--workers", type=int, default=2, help="one-thread workers per machine")
    args = parser.parse_args()
    hours = {}
    for folder in args.folders:
        for record in RecordStore(folder).records():
            if args.match in record.trial.key:
                hours[record.trial.key] = trial_hours(record)
    if not hours:
        raise SystemExit("no current record matches")
    longest = max(hours, key=hours.get)
    total = sum(hours.values())
    print(f"{len(hours)} trials, {total:.1f} learner hours; the longest: {longest}, {hours[longest]:.2f} h")
    print("\n| machines | workers | wall time (h) |\n|---|---|---|")
    for k in args.machines:
        print(f"| {k} | {k * args.workers} | {makespan(list(hours.values()), k * args.workers):.2f} |")


if __name__ == "__main__":
    main()
