"""Tuning sweep of the constants ``(c3, c4)`` of the derived-parameter mode of kernelized Exp3.

The derived mode is the paper's formulas ``η = c3/sqrt(T·γ)``, ``α = min(1, c4·η·γ)`` with
``γ = min(γ̂_T, γ̄_T)`` (``parameters.derived_parameters``). This sweep runs the App. 17 protocol
(adaptive adversary, ``|F| = 1000``, ``M = 100``, ``B = 2``) on settings 1–2 for every kernel and
every ``(c3, c4)`` of a grid, with ``λ`` the kernel's, and reports the final expected regret
relative to the paper's per-kernel constants. Seeds are distinct from the evaluation seeds (0–9)
of Table 3 so that the chosen constants are not fitted to the runs they are judged on.

Resumable: each finished trial is one line of ``OUT/tuning.jsonl``; a re-run skips them.

    python benchmarks/tune_derived.py --out benchmarks/results/tune-derived --seeds 100 101 102
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import statistics
import time
from pathlib import Path

import torch
from tqdm import tqdm

from torch_advbandit import KernelizedExp3
from torch_advbandit.experiments.adversarial import TrialConfig, build_environment
from torch_advbandit.experiments.runner import play
from torch_advbandit.experiments.settings import SETTINGS
from torch_advbandit.kernels import make_kernel
from torch_advbandit.parameters import TUNED_CONSTANTS, derived_parameters

KERNELS = ("se", "matern52", "matern32")
PAPER = "paper"  # the per-kernel constants of TUNED_CONSTANTS


def run_one(setting: int, kernel_name: str, constants, seed: int, horizon: int) -> dict:
    X = SETTINGS[setting].candidates()
    kernel = make_kernel(kernel_name, X.shape[-1])
    env = build_environment(TrialConfig(setting, kernel_name, "uniform", horizon, seed))
    chosen = TUNED_CONSTANTS[kernel_name][:2] if constants == PAPER else tuple(constants)
    params = derived_parameters(kernel, X, horizon, constants=chosen)
    policy = KernelizedExp3(X, kernel, horizon, **params, generator=torch.Generator().manual_seed(2 * seed + 1))
    start = time.perf_counter()
    traj = play(policy, env, horizon)
    return {
        "setting": setting,
        "kernel": kernel_name,
        "constants": constants,
        "seed": seed,
        "horizon": horizon,
        "regret": traj.expected_regret[-1],
        "seconds": time.perf_counter() - start,
        **{k: params[k] for k in ("eta", "alpha", "lam", "beta")},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/tune-derived"))
    parser.add_argument("--seeds", type=int, nargs="+", default=[100, 101, 102])
    parser.add_argument("--c3", type=float, nargs="+", default=[2.5, 5.0, 10.0, 20.0])
    parser.add_argument("--c4", type=float, nargs="+", default=[0.03, 0.1, 0.3])
    parser.add_argument("--horizon", type=int, default=1000)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "tuning.jsonl"
    done = {}
    if path.exists():
        for line in path.read_text().splitlines():
            r = json.loads(line)
            done[(r["setting"], r["kernel"], json.dumps(r["constants"]), r["seed"], r["horizon"])] = r
    grid = [PAPER] + [[c3, c4] for c3, c4 in itertools.product(args.c3, args.c4)]
    jobs = [
        (s, k, c, seed)
        for seed in args.seeds
        for c in grid
        for s in (1, 2)
        for k in KERNELS
        if (s, k, json.dumps(c), seed, args.horizon) not in done
    ]
    with path.open("a") as fh:
        for s, k, c, seed in tqdm(jobs, desc="tuning", unit="trial"):
            r = run_one(s, k, c, seed, args.horizon)
            fh.write(json.dumps(r) + "\n")
            fh.flush()
            done[(s, k, json.dumps(c), seed, args.horizon)] = r
    report(done.values(), grid, args)


def report(records, grid, args) -> None:
    """Mean final regret per cell over the seeds, and each grid point's ratio to the paper's constants."""
    cells = [(s, k) for s in (1, 2) for k in KERNELS]
    mean = {}
    for c in grid:
        for cell in cells:
            values = [
                r["regret"]
                for r in records
                if (r["setting"], r["kernel"]) == cell and r["constants"] == c and r["horizon"] == args.horizon
            ]
            mean[json.dumps(c), cell] = statistics.fmean(values) if values else math.nan
    head = "| (c3, c4) | " + " | ".join(f"s{s} {k}" for s, k in cells) + " | geometric mean ratio | worst ratio |"
    lines = [head, "|" + "---|" * (len(cells) + 3)]
    for c in grid:
        ratios = [mean[json.dumps(c), cell] / mean[json.dumps(PAPER), cell] for cell in cells]
        geo = math.exp(statistics.fmean(math.log(r) for r in ratios))
        label = "paper, per kernel" if c == PAPER else f"({c[0]:g}, {c[1]:g})"
        lines.append(
            f"| {label} | "
            + " | ".join(f"{mean[json.dumps(c), cell]:.1f}" for cell in cells)
            + f" | {geo:.3f} | {max(ratios):.3f} |"
        )
    text = "\n".join(lines)
    print(text)
    (args.out / "tuning.md").write_text(
        f"Final expected regret at T = {args.horizon}, mean over seeds {args.seeds}; ratios to the paper's "
        f"constants {TUNED_CONSTANTS} (c3, c4, λ).\n\n{text}\n"
    )


if __name__ == "__main__":
    main()
