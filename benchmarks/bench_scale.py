"""Exact, low-rank and RLS-Nyström estimators at n = 10⁴ (settings 3–4) and their scaling to 10⁵–10⁶.

Usage: python benchmarks/bench_scale.py [--device cpu] [--part accuracy scaling precision]
       [--scaling-sizes 100000 1000000] [--rounds 3] [--skip-exact]

Part ``accuracy`` — settings 3 (10 000-point grid of [0, 1]) and 4 (100 × 100 grid of [0, 1]²), the
three kernels, the paper's parameters for T = 1000 (ridge ``c = λ/T``). All three estimators see
the same skewed ``P_t`` (``0.95·softmax(30·f) + 0.05/n`` for a random RKHS function ``f``, as
mid-run exponential weights look) and the same draw ``x_t``. Reported: seconds per estimator round
(median of ``--rounds``; the exact one is a single round, as in the paper), the setup (kernel
matrix / pivoted Cholesky), the rank ``r`` or dictionary size ``s``, and the max relative error
of ``f̂_t`` (relative to ``max|f̂_t|``) and of the width against the exact estimator.

Part ``scaling`` — SE kernel, 1-D and 2-D grids with ``n`` up to 10⁶: low-rank and RLS-Nyström
estimator rounds, each (size, estimator) in a fresh process so peak memory (resident set on CPU,
``max_memory_allocated`` on CUDA) is its own.

Part ``precision`` — float32 (and, on CUDA, float32 with TF32 matmuls) against float64 for each
estimator at n = 4000 (1-D grid; SE and Matérn-5/2; ridge ``c = 1e-2`` and ``1e-3``, the paper's
values for T = 1000): the same ``P_t`` and ``x_t``, the same dictionary for RLS-Nyström, so the
errors are rounding only (for low-rank also the float32 pivoting tolerance, ``1e-6`` against
``1e-12``). Reported: max error of ``f̂_t`` relative to ``max|f̂_t|``, max relative error of
the width, and seconds per round against float64's.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
import warnings
from pathlib import Path

import torch

from torch_advbandit.center_selection import FixedSelector, NystromSample
from torch_advbandit.estimators import ExactIPSEstimator, LowRankIPSEstimator, NystromIPSEstimator
from torch_advbandit.estimators.nystrom import DEFAULT_EMBEDDING_TOLERANCE
from torch_advbandit.experiments.runner import machine_info
from torch_advbandit.kernels import kernel_matrix, make_kernel
from torch_advbandit.parameters import paper_parameters

KERNELS = ("se", "matern52", "matern32")


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def timed(device: torch.device, fn, *args):
    """``(seconds, fn(*args))`` with the device synchronised around the call."""
    sync(device)
    start = time.perf_counter()
    out = fn(*args)
    sync(device)
    return time.perf_counter() - start, out


def grid(points_per_dim: int, d: int, device: torch.device) -> torch.Tensor:
    axis = torch.linspace(0, 1, points_per_dim, dtype=torch.float64, device=device)
    return axis.unsqueeze(-1) if d == 1 else torch.cartesian_prod(*([axis] * d))


def skewed_probs(kernel, X: torch.Tensor, seed: int = 0) -> torch.Tensor:
    """``0.95·softmax(30·f) + 0.05/n`` for ``f = Σ a_i k(·, z_i)``, 200 random centres, ``a ~ U[−1, 1]``."""
    g = torch.Generator(device=X.device).manual_seed(seed)
    centres = X[torch.randperm(X.shape[0], generator=g, device=X.device)[:200]]
    a = 2 * torch.rand(centres.shape[0], generator=g, dtype=X.dtype, device=X.device) - 1
    values = kernel_matrix(kernel, X, centres) @ a
    return 0.95 * torch.softmax(30 * values / values.abs().max(), 0) + 0.05 / X.shape[0]


def ridge_for(kernel_name: str, d: int) -> float:
    params = paper_parameters(kernel_name, 1000, d)
    return params["lam"] / 1000


def estimator_rows(setting: int, name: str, X: torch.Tensor, rounds: int, skip_exact: bool) -> None:
    """Exact (one round), low-rank and RLS-Nyström on one (setting, kernel), same ``P_t`` and ``x_t``."""
    device, d = X.device, X.shape[-1]
    k = make_kernel(name, d, device=device)
    c = ridge_for(name, d)
    P = skewed_probs(k, X)
    i = int(torch.argmax(P))
    ref = None
    if not skip_exact:
        setup, est = timed(device, ExactIPSEstimator, k, X, c)
        sec, ref = timed(device, est._estimate, P, i, 1.0, None)
        del est
        print(f"| {setting} | {name} | exact (one round) | {setup:.2f} | {sec:.2f} | {X.shape[0]} | — | — |")
    with warnings.catch_warnings():  # a capped rank is reported in the table instead
        warnings.simplefilter("ignore", RuntimeWarning)
        setup, low = timed(device, lambda: LowRankIPSEstimator(k, X, c, max_rank=2000))
    times = [timed(device, low._estimate, P, i, 1.0, None) for _ in range(rounds)]
    row(
        setting,
        name,
        "low-rank",
        setup,
        times,
        f"{low.factor.rank} (max e {float(low.factor.residual.max()):.0e})",
        ref,
    )
    del low
    for tau in (0.0, DEFAULT_EMBEDDING_TOLERANCE):  # the same dictionaries (same generator seed) for both
        gen = torch.Generator(device=device).manual_seed(0)
        rls = NystromIPSEstimator(k, X, c, embedding_tolerance=tau)
        times, sizes = [], []
        for _ in range(rounds):
            times.append(timed(device, rls._estimate, P, i, 1.0, gen))
            sizes.append(rls.last_sample.size)
        row(setting, name, f"RLS-Nyström, τ = {tau:g}", 0.0, times, round(statistics.mean(sizes)), ref)
    if device.type == "cuda":
        torch.cuda.empty_cache()


def accuracy(device: torch.device, rounds: int, skip_exact: bool) -> None:
    print("### Accuracy and time at n = 10 000 (settings 3 and 4, T = 1000 parameters)\n")
    print(
        "| setting | kernel | estimator | setup (s) | s / round | r or s_t | max rel. err f̂ | max rel. err width |\n"
        "|---|---|---|---|---|---|---|---|",
        flush=True,
    )
    for setting, (m, d) in ((3, (10_000, 1)), (4, (100, 2))):
        X = grid(m, d, device)
        for name in KERNELS:
            estimator_rows(setting, name, X, rounds, skip_exact)


def row(setting, name, label, setup, times, size, ref) -> None:
    sec = statistics.median(t for t, _ in times)
    f_hat, width = times[-1][1]
    if ref is None:
        errs = "— | —"
    else:
        f_ref, w_ref = ref
        ef = float((f_hat - f_ref).abs().max() / f_ref.abs().max())
        ew = float(((width - w_ref).abs() / w_ref).max())
        errs = f"{ef:.1e} | {ew:.1e}"
    print(f"| {setting} | {name} | {label} | {setup:.2f} | {sec:.3f} | {size} | {errs} |", flush=True)


def peak_rss_gib() -> float:
    """This process's resident-set high-water mark (``VmHWM``: reset at exec, unlike ``ru_maxrss``,
    which a child forked from a large parent inherits)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 2**20
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def one_scaling(estimator: str, n: int, d: int, device: str, rounds: int) -> dict[str, float]:
    """One (estimator, n, d) measurement; run in a fresh interpreter by :func:`scaling`."""
    dev = torch.device(device)
    per_dim = round(n ** (1 / d))
    X = grid(per_dim, d, dev)
    k = make_kernel("se", d, device=dev)
    c = ridge_for("se", d)
    P = skewed_probs(k, X)
    i = int(torch.argmax(P))
    if dev.type == "cuda":
        torch.cuda.reset_peak_memory_stats(dev)
    gen = torch.Generator(device=dev).manual_seed(0)
    if estimator == "lowrank":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            setup, est = timed(dev, lambda: LowRankIPSEstimator(k, X, c, max_rank=2000))
        size = est.factor.rank
    else:
        setup, est = 0.0, NystromIPSEstimator(k, X, c)
    times = [timed(dev, est._estimate, P, i, 1.0, gen)[0] for _ in range(rounds)]
    if estimator != "lowrank":
        size = est.last_sample.size
    if dev.type == "cuda":
        peak = torch.cuda.max_memory_allocated(dev) / 2**30
    else:
        peak = peak_rss_gib()
    return dict(n=X.shape[0], setup=setup, seconds=statistics.median(times), size=size, peak=peak)


def scaling(device: str, sizes: list[int], rounds: int) -> None:
    memory = "peak GPU memory (GiB)" if device.startswith("cuda") else "peak RSS (GiB)"
    print("\n### Scaling (SE kernel, T = 1000 parameters; fresh process per row)\n")
    print(f"| grid | n | estimator | setup (s) | s / round | r or s_t | {memory} |\n|---|---|---|---|---|---|---|")
    for d in (1, 2):
        for n in sizes:
            for estimator in ("lowrank", "rls"):
                code = (
                    "import json, sys; sys.path.insert(0, 'benchmarks'); import bench_scale as b; "
                    f"print(json.dumps(b.one_scaling({estimator!r}, {n}, {d}, {device!r}, {rounds})))"
                )
                out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
                if out.returncode != 0:
                    print(f"| {d}-D | {n} | {estimator} | failed: {out.stderr.strip().splitlines()[-1]} |||||")
                    continue
                r = json.loads(out.stdout.strip().splitlines()[-1])
                label = "low-rank" if estimator == "lowrank" else "RLS-Nyström"
                print(
                    f"| {d}-D | {r['n']} | {label} | {r['setup']:.2f} | {r['seconds']:.3f} | {r['size']} "
                    f"| {r['peak']:.2f} |",
                    flush=True,
                )


def precision_estimators(k, X, c, dtype, sample):
    """(label, estimator, generator) for the three estimators on ``X`` in ``dtype``."""
    X = X.to(dtype)
    with warnings.catch_warnings():  # a capped rank is in the label
        warnings.simplefilter("ignore", RuntimeWarning)
        # float32 cannot pivot below ~1e-6 (docs/performance.rst): that tolerance, against float64's 1e-12
        low = LowRankIPSEstimator(k, X, c, tolerance=1e-12 if dtype == torch.float64 else 1e-6, max_rank=2000)
    fixed = NystromSample(sample.indices, sample.weights.to(dtype))
    return [
        ("exact", ExactIPSEstimator(k, X, c)),
        (f"low-rank (r = {low.factor.rank})", low),
        (
            f"RLS-Nyström (s = {sample.size})",
            NystromIPSEstimator(k, X, c, selector=FixedSelector(fixed), embedding_tolerance=0.0),
        ),
    ]


def precision(device: torch.device, rounds: int) -> None:
    print("\n### Precision: float32 (and TF32 on CUDA) against float64, n = 4000, same P_t, x_t, dictionary\n")
    print(
        "| kernel | c | estimator | arithmetic | max rel. err f̂ | max rel. err width | s / round | × float64 time |\n"
        "|---|---|---|---|---|---|---|---|",
        flush=True,
    )
    modes = [("float32", False)] + ([("float32 + TF32", True)] if device.type == "cuda" else [])
    X = grid(4000, 1, device)
    for name in ("se", "matern52"):
        k = make_kernel(name, 1, device=device)
        P = skewed_probs(k, X)
        i = int(torch.argmax(P))
        for c in (1e-2, 1e-3):
            gen = torch.Generator(device=device).manual_seed(0)
            sample = NystromIPSEstimator(k, X, c).selector.select(k, X, c, P, gen)
            ref = {}
            for label, est in precision_estimators(k, X, c, torch.float64, sample):
                times = [timed(device, est._estimate, P, i, 1.0, None) for _ in range(rounds)]
                ref[label.split(" (")[0]] = (statistics.median(t for t, _ in times), times[-1][1])
            for mode, tf32 in modes:
                previous = torch.get_float32_matmul_precision()
                torch.set_float32_matmul_precision("high" if tf32 else "highest")
                try:
                    for label, est in precision_estimators(k, X, c, torch.float32, sample):
                        times = [timed(device, est._estimate, P.float(), i, 1.0, None) for _ in range(rounds)]
                        sec = statistics.median(t for t, _ in times)
                        f32, w32 = times[-1][1]
                        base_sec, (f64, w64) = ref[label.split(" (")[0]]
                        ef = float((f32.double() - f64).abs().max() / f64.abs().max())
                        ew = float(((w32.double() - w64) / w64).abs().max())
                        print(
                            f"| {name} | {c:.0e} | {label} | {mode} | {ef:.1e} | {ew:.1e} | {sec:.2g} "
                            f"| {sec / base_sec:.2f} |",
                            flush=True,
                        )
                finally:
                    torch.set_float32_matmul_precision(previous)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parts = ["accuracy", "scaling", "precision"]
    parser.add_argument("--part", nargs="+", default=parts, choices=parts)
    parser.add_argument("--scaling-sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--skip-exact", action="store_true")
    args = parser.parse_args()
    device = torch.device(args.device)
    info = machine_info()
    if device.type == "cuda":
        info["gpu"] = torch.cuda.get_device_name(device)
    print(f"machine: {info}\n")
    if "accuracy" in args.part:
        accuracy(device, args.rounds, args.skip_exact)
    if "scaling" in args.part:
        scaling(args.device, args.scaling_sizes, args.rounds)
    if "precision" in args.part:
        precision(device, args.rounds)


if __name__ == "__main__":
    main()
