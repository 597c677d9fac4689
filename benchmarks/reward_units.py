"""Kernelized Exp3 with rewards in the user's unit: a fixed ``reward_scale`` against ``reward_scale="auto"``.

Usage: python benchmarks/reward_units.py [--setting 1] [--kernels se matern52] [--seeds 5]
       [--units 0.01 0.1 1 10 100] [--out FILE.md]

The Table-3 protocol ([Iwazaki2026], App. 17: the adaptive adversary, ``T = 1000``, the trial's environment
and the learner's generator seeded as in ``torch-advbandit reproduce table3``), with every reward the learner
sees multiplied by ``unit`` (the regret is reported in the adversary's own unit, so the rows compare). The
policy is ``KernelizedExp3(candidates, kernel, 1000)`` with derived parameters and the default
``reward_scale=1`` (the paper's unit: rewards of RKHS norm at most 2), or ``reward_scale="auto"``, whose
choices are the same in every unit (``tests/test_reward_scale.py``), so it is run once, in the unit 100.
"""

from __future__ import annotations

import argparse

import torch

from torch_advbandit import KernelizedExp3
from torch_advbandit.experiments.adversarial import TrialConfig, build_environment
from torch_advbandit.experiments.report import mean_se
from torch_advbandit.experiments.settings import SETTINGS
from torch_advbandit.kernels import make_kernel

HORIZON = 1000


def trial(setting: int, kernel_name: str, seed: int, unit: float, reward_scale) -> float:
    """Static expected regret ``max_x Σ f_t(x) − Σ ⟨P_t, f_t⟩`` in the adversary's unit."""
    X = SETTINGS[setting].candidates()
    env = build_environment(TrialConfig(setting, kernel_name, "kernelized_exp3_derived", HORIZON, seed))
    kernel = make_kernel(kernel_name, X.shape[1])
    generator = torch.Generator().manual_seed(2 * seed + 1)
    policy = KernelizedExp3(X, kernel, HORIZON, reward_scale=reward_scale, generator=generator)
    total, gain = torch.zeros(X.shape[0], dtype=X.dtype), 0.0
    for t in range(HORIZON):
        probs = policy.probabilities()
        f = env.rewards(t, probs)
        total += f
        gain += float(f @ probs)
        i = policy.select()
        policy.update(i, unit * env.feedback(t, i, f))
    return float(total.max()) - gain


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--setting", type=int, default=1)
    parser.add_argument("--kernels", nargs="+", default=["se", "matern52"])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--units", type=float, nargs="+", default=[0.01, 0.1, 1.0, 10.0, 100.0])
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    lines = [
        f"| kernel | rewards in the unit | `reward_scale` | regret (mean ± s.e., {args.seeds} seeds) | / unit 1 |",
        "|---|---|---|---|---|",
    ]
    for kernel_name in args.kernels:
        runs = [(u, 1.0) for u in sorted(set(args.units) | {1.0})] + [(100.0, "auto")]
        results = {}
        for unit, scale in runs:
            regrets = [trial(args.setting, kernel_name, s, unit, scale) for s in range(args.seeds)]
            results[(unit, scale)] = mean_se(regrets)
            print(kernel_name, unit, scale, results[(unit, scale)], flush=True)
        reference = results[(1.0, 1.0)][0]
        for (unit, scale), (mean, se) in results.items():
            lines.append(f"| {kernel_name} | {unit:g} | {scale} | {mean:.2f} ± {se:.2f} | {mean / reference:.2f} |")
    text = "\n".join(lines)
    print(text)
    if args.out:
        with open(args.out, "w") as handle:
            handle.write(text + "\n")


if __name__ == "__main__":
    main()
