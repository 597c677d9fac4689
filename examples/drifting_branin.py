"""A standard BoTorch loop on Branin whose optimum jumps: vanilla UCB against the discounted, the automatic and
the tested forgetting of this package.

    python examples/drifting_branin.py [--rounds 150] [--seeds 3] [--methods ...] [--out results/drifting_branin]

The objective at round ``t`` is BoTorch's negated Branin, shifted along ``x₁`` by ``s_t``, which
jumps from 0 to 4 at ``T/3`` and to −4 at ``2T/3`` (an abruptly changing environment as in [Deng2022],
Sec. 6), scaled to unit range: ``f_t(x) = −(Branin(x₁ − s_t, x₂) − 10)/50``,
observed with Gaussian noise 0.05. Every loop starts from the same two random points and picks from a
32 × 32 grid of the box (``torch_advbandit.domains.discretize``) with ``optimize_acqf_discrete`` and UCB at
the same width (BoTorch's ``beta = 4``). Methods (``--methods``, all by default):

* ``vanilla``: ``SingleTaskGP`` with BoTorch's defaults (its kernel and priors, standardised outcomes),
  refitted with ``fit_gpytorch_mll`` every round, and ``UpperConfidenceBound(beta=4)``;
* ``discounted``: ``torch_advbandit.acquisition.discounted_ucb`` as in [Deng2022] (the weighted GP of
  WGP-UCB with discount ``η = 0.97`` on a fixed SE kernel, ``ℓ = 0.3·√2``; outcomes standardised like the
  vanilla model's; ``β_t`` of WGP-UCB);
* ``fitted``: the vanilla loop with one line changed, ``discounted_gp(..., discount=0.97, fit=True)`` (BoTorch's
  kernel, fitted by maximum weighted marginal likelihood) in place of the ``SingleTaskGP``;
* ``auto``: the ask/tell policy ``WGPUCB(discount="auto", fit_hyperparameters=True)`` on BoTorch's kernel
  (the memory chosen each round from the data);
* ``tested``: the same with ``significance=0.01`` (a change at an unknown round tested by likelihood ratio; where
  it passes, the memory keeps every row since it);
* ``fixed``: ``WGPUCB(discount=0.9, fit_hyperparameters=True, significance=0.01)`` on BoTorch's kernel (a fixed
  forgetting rate; where the test accepts a change, nothing from before it);
* ``changes``: ``TimeVaryingGPUCB(significance=0.01, change_points=True)`` on BoTorch's kernel (a forgetting
  rate and a change at an unknown round, each tested against none);
* ``time_varying``: ``WGPUCB(discount="auto", fit_hyperparameters=True, time_varying_significance=0.01)`` on
  BoTorch's kernel (the automatic memory, with selections on a space-time model of the rows where its fitted
  forgetting rate passes a likelihood-ratio test at level 0.01 and no change point is in force, and while one is,
  on one GP of every row with the rows before and since the change correlated by a fitted factor).

Prints the dynamic regret ``Σ_t max_x f_t(x) − f_t(x_t)`` of each (mean ± s.e. over seeds), and writes
the table (``table.md``) and ``regret.png``. ``SMOKE_TEST=1`` runs a few rounds (CI).

Each finished loop is kept in ``runs-<method>.json`` in the output folder, under a fingerprint of the code that
ran it (this script, the sources of ``torch_advbandit``, the versions of torch, gpytorch, botorch, linear_operator,
numpy and scipy): a rerun, or one interrupted and started again, redoes only the loops missing for the same code,
and a file that is damaged or was written by other code is not used. Runs for disjoint ``--methods`` can share a
folder at the same time; the table and figure show the methods asked for.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import warnings
from importlib import metadata
from pathlib import Path

import torch
from botorch.acquisition import UpperConfidenceBound
from botorch.exceptions import InputDataWarning
from botorch.fit import fit_gpytorch_mll
from botorch.models import SingleTaskGP
from botorch.models.utils.gpytorch_modules import get_covar_module_with_dim_scaled_prior
from botorch.optim import optimize_acqf_discrete
from botorch.test_functions import Branin
from botorch.utils.transforms import standardize
from gpytorch.mlls import ExactMarginalLogLikelihood
from tqdm.auto import tqdm

import torch_advbandit
from torch_advbandit import WGPUCB, TimeVaryingGPUCB
from torch_advbandit.acquisition import discounted_ucb
from torch_advbandit.domains import discretize
from torch_advbandit.experiments.records import atomic_file
from torch_advbandit.experiments.report import mean_se, mean_se_curve
from torch_advbandit.kernels import make_kernel
from torch_advbandit.models import discounted_gp

NOISE = 0.05
METHODS = ("vanilla", "discounted", "fitted", "auto", "tested", "fixed", "changes", "time_varying")
#: The ``WGPUCB`` methods: their memory options.
WGPUCB_METHODS = {
    "auto": {"discount": "auto"},
    "tested": {"discount": "auto", "significance": 0.01},
    "fixed": {"discount": 0.9, "significance": 0.01},
    "time_varying": {"discount": "auto", "time_varying_significance": 0.01},
}
ASK_TELL = (*WGPUCB_METHODS, "changes")
BRANIN = Branin(bounds=[(-9.0, 14.0), (0.0, 15.0)])  # room for the shift of ±4 along x₁


def objective(points: torch.Tensor, t: int, horizon: int) -> torch.Tensor:
    """``f_t`` on points of the box, ``Tensor[m]``."""
    shift = (0.0, 4.0, -4.0)[min(2, 3 * t // horizon)]
    moved = points.clone()
    moved[:, 0] = moved[:, 0] - shift
    return -(BRANIN(moved) - 10.0) / 50.0


def vanilla_acqf(train_U: torch.Tensor, train_Y: torch.Tensor) -> UpperConfidenceBound:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InputDataWarning)
        model = SingleTaskGP(train_U, train_Y)
        fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))
    return UpperConfidenceBound(model, beta=4.0)


def policy_for(method: str, unit: torch.Tensor, seed: int):
    """The ask/tell policies (``auto``, ``tested``, ``fixed``, ``time_varying``, ``changes``) on the grid, BoTorch's
    kernel, ``β = 2``, no horizon."""
    kernel = get_covar_module_with_dim_scaled_prior(ard_num_dims=2).to(unit.dtype)
    gen = torch.Generator().manual_seed(10_000 + seed)
    if method in WGPUCB_METHODS:
        memory = WGPUCB_METHODS[method]
        return WGPUCB(unit, kernel, None, lam=0.1, beta=2.0, fit_hyperparameters=True, generator=gen, **memory)
    return TimeVaryingGPUCB(unit, kernel, None, beta=2.0, significance=0.01, change_points=True, generator=gen)


def run(method: str, horizon: int, seed: int, bar) -> list[float]:
    """One loop; returns the cumulative dynamic regret after each round."""
    domain = discretize(torch.tensor([[-5.0, 0.0], [10.0, 15.0]], dtype=torch.float64), 1024)
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)  # fit_gpytorch_mll's restarts draw from the global generator: one stream per run
    kernel = make_kernel("se", 2)
    botorch_kernel = get_covar_module_with_dim_scaled_prior(ard_num_dims=2).to(torch.float64)
    first = torch.randint(domain.unit.shape[0], (2,), generator=gen)
    train_U = domain.unit[first]
    train_Y = torch.stack([objective(domain.points[first], t, horizon) for t in range(2)]).diagonal().unsqueeze(-1)
    train_Y = train_Y + NOISE * torch.randn(train_Y.shape, generator=gen, dtype=train_Y.dtype)
    policy = policy_for(method, domain.unit, seed) if method in ASK_TELL else None
    if policy is not None:
        policy.observe(train_U, train_Y)  # the initial design, before the first ask
    regret, total = [], 0.0
    for t in range(horizon):
        if policy is not None:
            u_next = domain.unit[policy.select()].unsqueeze(0)
        else:
            if method == "vanilla":
                acqf = vanilla_acqf(train_U, train_Y)
            elif method == "fitted":  # the vanilla loop with the model replaced
                model = discounted_gp(train_U, train_Y, botorch_kernel, discount=0.97, fit=True)
                acqf = UpperConfidenceBound(model, beta=4.0)
            else:
                Y = standardize(train_Y)  # as SingleTaskGP's default outcome transform does for vanilla
                acqf = discounted_ucb(
                    train_U, Y, kernel, discount=0.97, lam=0.1, noise_bound=NOISE / float(train_Y.std())
                )
            with torch.no_grad():
                u_next, _ = optimize_acqf_discrete(acqf, q=1, choices=domain.unit, max_batch_size=2048)
        f = objective(domain.points, t, horizon)
        x_next = domain.from_unit(u_next)
        value = objective(x_next, t, horizon)
        total += float(f.max() - value[0])
        regret.append(total)
        y = value.unsqueeze(-1) + NOISE * torch.randn(1, 1, generator=gen, dtype=value.dtype)
        if policy is not None:
            policy.observe(u_next, y)  # answers the pending ask
        train_U, train_Y = torch.cat([train_U, u_next]), torch.cat([train_Y, y])
        bar.update(1)
    return regret


#: The libraries whose versions a loop's record depends on (their numerics decide the fits and the choices).
LIBRARIES = ("torch", "gpytorch", "botorch", "linear_operator", "numpy", "scipy")


def code_fingerprint() -> str:
    """SHA-256 of this script, the package's sources and the versions of :data:`LIBRARIES`."""
    digest = hashlib.sha256(Path(__file__).read_bytes())
    package = Path(torch_advbandit.__file__).parent
    for path in sorted(package.rglob("*.py")):
        digest.update(str(path.relative_to(package)).encode() + b"\0" + path.read_bytes())
    for name in LIBRARIES:
        digest.update(f"{name}={metadata.version(name)}".encode())
    return digest.hexdigest()


def load_runs(path: Path, fingerprint: str, rounds: int) -> dict[int, list[float]]:
    """The loops kept in ``path`` (seed → cumulative regret) if it was written by this code for ``rounds``
    rounds; none when it is missing, damaged or from other code (a warning says which)."""
    if not path.exists():
        return {}
    try:
        record = json.loads(path.read_text())
        if record["fingerprint"] != fingerprint or record["rounds"] != rounds:
            return {}
        runs = {int(seed): [float(v) for v in curve] for seed, curve in record["runs"].items()}
        if any(len(curve) != rounds for curve in runs.values()):
            raise ValueError("a curve of the wrong length")
        return runs
    except (ValueError, KeyError, TypeError, AttributeError) as err:
        warnings.warn(f"{path} is damaged ({err}); its loops are run again", stacklevel=2)
        return {}


def save_runs(path: Path, fingerprint: str, rounds: int, runs: dict[int, list[float]]) -> None:
    """Writes ``runs`` to ``path`` whole or not at all (``torch_advbandit.experiments.records.atomic_file``)."""
    record = {"fingerprint": fingerprint, "rounds": rounds, "runs": {str(s): c for s, c in sorted(runs.items())}}
    with atomic_file(path) as fh:
        fh.write(json.dumps(record))


def main() -> None:
    smoke = os.environ.get("SMOKE_TEST") == "1"
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=8 if smoke else 150)
    parser.add_argument("--seeds", type=int, default=1 if smoke else 3)
    parser.add_argument("--methods", nargs="+", choices=METHODS, default=list(METHODS))
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("EXAMPLE_OUT", "results/drifting_branin")))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    fingerprint = code_fingerprint()
    kept = {m: load_runs(args.out / f"runs-{m}.json", fingerprint, args.rounds) for m in args.methods}
    todo = [(seed, m) for seed in range(args.seeds) for m in kept if seed not in kept[m]]
    with tqdm(total=len(todo) * args.rounds, unit="round") as bar:
        for seed, method in todo:
            kept[method][seed] = run(method, args.rounds, seed, bar)
            save_runs(args.out / f"runs-{method}.json", fingerprint, args.rounds, kept[method])
    curves = {m: [kept[m][seed] for seed in range(args.seeds)] for m in args.methods}
    lines = ["| method | rounds | seeds | dynamic regret (mean ± s.e.) | / vanilla |", "|---|---|---|---|---|"]
    base = mean_se([r[-1] for r in curves["vanilla"]])[0] if "vanilla" in curves else float("nan")
    for method, runs in curves.items():
        m, se = mean_se([r[-1] for r in runs])
        lines.append(f"| {method} | {args.rounds} | {args.seeds} | {m:.2f} ± {se:.2f} | {m / base:.2f} |")
    table = "\n".join(lines) + "\n"
    print("\n" + table)
    with atomic_file(args.out / "table.md") as fh:
        fh.write(table)

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for method, runs in curves.items():
        mean, se = mean_se_curve(runs)
        t = torch.arange(1, len(mean) + 1)
        (line,) = ax.plot(t, mean, label=method)
        ax.fill_between(t, mean - se, mean + se, color=line.get_color(), alpha=0.25)
    ax.set_xlabel("round t")
    ax.set_ylabel("cumulative dynamic regret")
    ax.set_title("Branin whose optimum jumps at T/3 and 2T/3")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(args.out / "regret.png", dpi=110)
    print(f"plot: {args.out / 'regret.png'}")


if __name__ == "__main__":
    main()
