"""Seconds per round of the 6-D user loop's methods after a long history: how the cost grows with ``t``.

Usage: python benchmarks/bench_long_run.py [--t 100 200 400] [--rounds 3] [--methods ...] [--out FILE.md]

The methods and set-up of ``benchmarks/user_loop_6d.py`` (Hartmann-6, negated, on 2048 scrambled Sobol points of
``[0, 1]⁶``, noise 0.05, ``horizon=None``, ``ScaleKernel(MaternKernel(2.5, ARD))`` for the package's policies, vanilla
BoTorch's ``SingleTaskGP`` fitted every round for ``botorch``). Each policy is handed ``t`` random candidates with their
noisy values at once (``observe``, an initial design or a history from elsewhere; nothing moves), then plays
``--rounds`` rounds of ``select()`` + ``observe`` on the stationary function; the median over the rounds after the
first is reported, with its ratio to vanilla BoTorch's round at the same ``t`` in the same run (the floor: one fit
of BoTorch's model on every row and one posterior over the candidates).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch
from botorch.test_functions import Hartmann

sys.path.insert(0, str(Path(__file__).parent))
from user_loop_6d import NOISE, WGPUCB_METHODS, D, N, make  # noqa: E402

from torch_advbandit.domains import discretize  # noqa: E402


def round_seconds(method: str, X: torch.Tensor, t: int, rounds: int) -> list[float]:
    """Seconds of each of ``rounds`` rounds after ``t`` rows handed over at once."""
    f = Hartmann(dim=D, negate=True).to(X.dtype)
    noise = torch.Generator().manual_seed(7)

    def values(rows: torch.Tensor) -> torch.Tensor:
        y = f(X[rows])
        return (y + NOISE * torch.randn(y.shape, generator=noise, dtype=y.dtype)).unsqueeze(-1)

    history = torch.randint(N, (t,), generator=torch.Generator().manual_seed(t))
    policy = make(method, X, 0)
    policy.observe(X[history], values(history))
    seconds = []
    for _ in range(rounds):
        start = time.perf_counter()
        asks = policy.select(1).reshape(-1)
        policy.observe(X[asks], values(asks))
        seconds.append(time.perf_counter() - start)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--t", type=int, nargs="+", default=[100, 200, 400])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--methods", nargs="+", default=["botorch", *WGPUCB_METHODS, "tv_changes"])
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    if args.rounds < 2:
        parser.error("--rounds: at least 2 (the first round after the history is not counted)")
    X = discretize(torch.tensor([[0.0] * D, [1.0] * D], dtype=torch.float64), N, seed=0).unit
    lines = ["| method | t | s / round (median) | / vanilla BoTorch |", "|---|---|---|---|"]
    for t in args.t:
        floor = None
        for method in args.methods:
            seconds = statistics.median(round_seconds(method, X, t, args.rounds)[1:])
            floor = seconds if method == "botorch" else floor
            ratio = f"{seconds / floor:.1f}" if floor else "—"
            lines.append(f"| {method} | {t} | {seconds:.2f} | {ratio} |")
            print(lines[-1], flush=True)
    text = "\n".join(lines)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")


if __name__ == "__main__":
    main()
