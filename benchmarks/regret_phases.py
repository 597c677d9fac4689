"""Where the drifting benchmark's regret is lost: each method's dynamic regret split into the rounds before
``T/2``, the three rounds from ``T/2`` (the abrupt scenario's jump and the two rounds after it) and the rest,
beside vanilla BoTorch's on the same seeds.

Usage: python benchmarks/regret_phases.py DIR [DIR ...] [--methods wgp_auto_fitted ...] [--scenarios abrupt]
[--after 3]

For every problem, scenario and method in the current, whole records of each ``DIR`` (a ``reproduce drifting``
folder; stale and damaged records are left out as ``reproduce`` leaves them out), over the seeds both the method
and ``botorch_ucb`` ran: the mean regret of each phase for the method and for BoTorch, the difference
(method − BoTorch) in each phase, and the ratio of the totals with its paired 95 % bootstrap interval
(:func:`paired_ratios.paired_interval`). A rule that forgets can only gain after the objective moves; a difference
before ``T/2`` on the abrupt scenario (where ``f_t`` is the stationary control's until then) is the rule's
selections on a function that has not moved yet.

With ``--change-rounds``: for each method that records the memory's change point (diagnostic ``since``, the row
from which the memory keeps every row; 0 for none), the rounds whose selection was made while one was in force
(``since > 0`` after the round before), how many runs hold one, and the regret of those rounds beside BoTorch's
in the same rounds of the same seeds (:func:`change_point_regret`).
"""

from __future__ import annotations

import argparse
import statistics
from collections import defaultdict

from paired_ratios import paired_interval

from torch_advbandit.experiments.store import RecordStore


def phase_regret(cumulative: list[float], after: int) -> tuple[float, float, float]:
    """``(before, jump, rest)``: the regret of the rounds ``[0, T/2)``, ``[T/2, T/2 + after)`` and the rest, from a
    cumulative dynamic regret of ``T`` rounds (``T/2`` rounded up, the abrupt scenario's first round of the new
    function).

    Example:
        >>> phase_regret([1.0, 2.0, 4.0, 7.0, 8.0, 9.0], 1)
        (4.0, 3.0, 2.0)
    """
    half = -(-len(cumulative) // 2)
    cut = min(half + after, len(cumulative))
    return cumulative[half - 1], cumulative[cut - 1] - cumulative[half - 1], cumulative[-1] - cumulative[cut - 1]


def change_point_regret(cumulative: list[float], vanilla: list[float], since: list[float]) -> tuple[int, float, float]:
    """``(rounds, ours, theirs)``: the rounds selected while a change point was in force (``since[t − 1] > 0``: the
    memory after round ``t − 1`` is what round ``t`` selects on) and the regret of those rounds in ``cumulative``
    and in ``vanilla`` (cumulative dynamic regrets of the same rounds).

    Example:
        >>> change_point_regret([1.0, 2.0, 4.0, 7.0], [1.0, 1.5, 2.0, 2.5], [0.0, 3.0, 3.0, 0.0])
        (2, 5.0, 1.0)
    """
    rounds = [t for t in range(1, len(cumulative)) if since[t - 1] > 0]
    ours = sum(cumulative[t] - cumulative[t - 1] for t in rounds)
    theirs = sum(vanilla[t] - vanilla[t - 1] for t in rounds)
    return len(rounds), ours, theirs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="+")
    parser.add_argument("--methods", nargs="+", default=None, help="methods to report (default: all but BoTorch)")
    parser.add_argument("--scenarios", nargs="+", default=["abrupt", "drift", "stationary"])
    parser.add_argument("--after", type=int, default=3, help="rounds from T/2 counted as the jump's (default 3)")
    parser.add_argument("--resamples", type=int, default=4000)
    parser.add_argument("--change-rounds", action="store_true", help="the rounds selected under a change point")
    args = parser.parse_args()
    if args.after < 1:
        parser.error("--after: at least 1")
    if args.resamples < 100:
        parser.error("--resamples: at least 100")
    curves: dict[tuple, dict[int, list[float]]] = defaultdict(dict)
    changes: dict[tuple, dict[int, list[float]]] = defaultdict(dict)
    for folder in args.dirs:
        for r in RecordStore(folder).records():
            c = r.trial
            curves[(c.problem, c.scenario, c.method)][c.seed] = list(r.expected_regret)
            if "since" in r.diagnostics:
                changes[(c.problem, c.scenario, c.method)][c.seed] = list(r.diagnostics["since"])
    if args.change_rounds:
        print("| problem | scenario | method | seeds | runs holding a change | rounds | their regret | BoTorch's |")
        print("|---|---|---|---|---|---|---|---|")
        for key in sorted(changes):
            if key[1] not in args.scenarios or (args.methods and key[2] not in args.methods):
                continue
            base = curves.get((*key[:2], "botorch_ucb"), {})
            seeds = sorted(set(base) & set(changes[key]))
            parts = [change_point_regret(curves[key][s], base[s], changes[key][s]) for s in seeds]
            held = sum(1 for n, _, _ in parts if n)
            n, ours, theirs = (sum(p[k] for p in parts) for k in range(3))
            print(f"| {key[0]} | {key[1]} | {key[2]} | {len(seeds)} | {held} | {n} | {ours:.1f} | {theirs:.1f} |")
        return
    a = args.after
    print(f"| problem | scenario | method | seeds | before T/2 | T/2 to T/2 + {a} | rest | total, / BoTorch "
          "(95 % interval) |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|")
    for problem, scenario, method in sorted(curves):
        if method == "botorch_ucb" or scenario not in args.scenarios or (args.methods and method not in args.methods):
            continue
        base = curves.get((problem, scenario, "botorch_ucb"), {})
        seeds = sorted(set(base) & set(curves[(problem, scenario, method)]))
        if len(seeds) < 2:
            continue
        ours = [phase_regret(curves[(problem, scenario, method)][s], a) for s in seeds]
        theirs = [phase_regret(base[s], a) for s in seeds]
        cells = []
        for k in range(3):
            mine, vanilla = statistics.mean(p[k] for p in ours), statistics.mean(p[k] for p in theirs)
            cells.append(f"{mine:.2f} vs {vanilla:.2f} ({mine - vanilla:+.2f})")
        point, low, high = paired_interval([sum(p) for p in ours], [sum(p) for p in theirs], args.resamples)
        print(f"| {problem} | {scenario} | {method} | {len(seeds)} | {' | '.join(cells)} | "
              f"{point:.2f} ({low:.2f}–{high:.2f}) |")  # fmt: skip


if __name__ == "__main__":
    main()
