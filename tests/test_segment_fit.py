"""The hyperparameters of two segments that share them (torch_advbandit/segment_fit.py), against dense
computations: the block-diagonal covariance, the optimum of the two segments' summed log-likelihood, and the
policy's fit while a change point is in force is checked in tests/test_tested_change.py."""

import math

import pytest
import torch
from gpytorch.kernels import MaternKernel, ScaleKernel
from gpytorch.priors import LogNormalPrior

from torch_advbandit.discount_selection import weighted_stats
from torch_advbandit.kernels import make_kernel
from torch_advbandit.segment_fit import SegmentKernel, fit_segments

DT = torch.float64


def rows(m=24, since=14, d=2, seed=0):
    """``m`` rows in ``[0, 1]^d``: a smooth function before ``since``, its negative shifted by 5 from it on."""
    g = torch.Generator().manual_seed(seed)
    X = torch.rand(m, d, generator=g, dtype=DT)
    f = torch.sin(5 * X).sum(-1)
    Y = torch.where(torch.arange(m) < since, f, 5.0 - f) + 0.05 * torch.randn(m, generator=g, dtype=DT)
    return X, Y


def ard_kernel(d=2):
    return ScaleKernel(MaternKernel(nu=2.5, ard_num_dims=d)).to(DT)


@pytest.mark.parametrize("diag", [False, True])
def test_the_segment_kernel_is_the_block_diagonal_of_its_base(diag):
    X, _ = rows()
    base = ard_kernel()
    base.base_kernel.lengthscale = torch.tensor([[0.3, 0.7]], dtype=DT)
    base.outputscale = 1.7
    label = (torch.arange(24) >= 14).to(DT).unsqueeze(-1)
    with torch.no_grad():
        got = SegmentKernel(base)(torch.cat([X, label], -1), diag=diag).to_dense()
        dense = base(X).to_dense()
    expected = torch.block_diag(dense[:14, :14], dense[14:, 14:])
    torch.testing.assert_close(got, expected.diagonal() if diag else expected)


def segments_objective(X, Y, since, lengthscale, outputscale, lam_z, constant):
    """``Σ_seg log N(z_seg; c, K_seg + λ_z I)`` (Matérn-5/2 with ARD lengthscales and an outputscale, no priors on
    them) with each segment standardised by its own statistics, plus BoTorch's ``LogNormal(−4, 1)`` log-prior of
    ``λ_z``: dense, segment by segment."""
    total = 0.0
    for seg in (slice(0, since), slice(since, None)):
        mean, std = weighted_stats(Y[seg], torch.zeros_like(Y[seg]))
        z = (Y[seg] - mean) / std
        r = torch.cdist(X[seg] / lengthscale, X[seg] / lengthscale)
        K = outputscale * (1 + math.sqrt(5) * r + 5 / 3 * r**2) * torch.exp(-math.sqrt(5) * r)
        cov = K + lam_z * torch.eye(z.numel(), dtype=DT)
        total += float(torch.distributions.MultivariateNormal(torch.full_like(z, constant), cov).log_prob(z))
    return total + float(LogNormalPrior(torch.tensor(-4.0, dtype=DT), 1.0).log_prob(torch.tensor(lam_z, dtype=DT)))


def test_the_fit_maximises_the_two_segments_summed_likelihood():
    """The fitted point beats every ±5 % move of each hyperparameter under the dense two-segment objective; the
    fit of the rows since the change alone (a GP of its own) does not reach that optimum."""
    X, Y = rows()
    since, start = 14, ard_kernel()
    kernel, lam, constant = fit_segments(X, Y, since, start, standardize=True, like=X, seed=3)
    std_after = weighted_stats(Y[since:], torch.zeros(Y.numel() - since, dtype=DT))[1]
    point = {
        "lengthscale": kernel.base_kernel.lengthscale.detach().reshape(-1).clone(),
        "outputscale": float(kernel.outputscale),
        "lam_z": lam / std_after**2,
        "constant": constant,
    }
    best = segments_objective(X, Y, since, **point)
    for name in point:
        for step in (0.95, 1.05):
            moved = dict(point)
            moved[name] = point[name] * step if name != "constant" else point[name] + (step - 1.0)
            assert segments_objective(X, Y, since, **moved) < best, (name, step)
    lone_kernel, lone_lam, lone_c = fit_hyperparameters_since(X, Y, since, start)
    lone = {
        "lengthscale": lone_kernel.base_kernel.lengthscale.detach().reshape(-1),
        "outputscale": float(lone_kernel.outputscale),
        "lam_z": lone_lam / std_after**2,
        "constant": lone_c,
    }
    assert segments_objective(X, Y, since, **lone) < best - 0.5


def fit_hyperparameters_since(X, Y, since, kernel):
    """The fit on the rows since the change alone (BoTorch's, standardised by their own statistics)."""
    from torch_advbandit.policies.adaptation import fit_hyperparameters

    ages = torch.arange(Y.numel() - since - 1, -1, -1, dtype=DT)
    return fit_hyperparameters(X[since:], Y[since:], ages, kernel, None, 1.0, standardize=True, like=X, seed=3)


def test_without_standardising_the_outcomes_are_fitted_as_they_are():
    X, Y = rows(m=16, since=8, d=1)
    kernel, lam, c = fit_segments(X, Y - 2.0, 8, make_kernel("se", 1), standardize=False, like=X, seed=0)
    _, lam_shifted, c_shifted = fit_segments(X, Y, 8, make_kernel("se", 1), standardize=False, like=X, seed=0)
    assert c_shifted == pytest.approx(c + 2.0, abs=1e-3) and lam_shifted == pytest.approx(lam, rel=1e-3)
    assert not kernel.raw_lengthscale.requires_grad


@pytest.mark.parametrize("since", [0, 16, -1])
def test_a_split_outside_the_rows_is_refused(since):
    X, Y = rows(m=16, since=8, d=1)
    with pytest.raises(ValueError, match="since"):
        fit_segments(X, Y, since, make_kernel("se", 1), standardize=True, like=X)
