"""``WGPUCB(discount="auto", fit_hyperparameters=True, significance=α)``: the automatic memory with a change
at an unknown round tested by likelihood ratio (torch_advbandit/policies/tested_change.py); the same test under a
fixed discount or window."""

import pytest
import torch
from conftest import same_state

from torch_advbandit import WGPUCB, SlidingWindowGPUCB
from torch_advbandit.fitting import fit_seed
from torch_advbandit.kernels import make_kernel
from torch_advbandit.policies import tested_change
from torch_advbandit.policies.change_point_test import split_candidates
from torch_advbandit.policies.change_points import WARMUP
from torch_advbandit.segment_fit import fit_segments

DT = torch.float64
X = torch.linspace(0, 1, 60, dtype=DT).unsqueeze(-1)


def policy(significance=0.01, seed=0, cls=WGPUCB, **options):
    """``cls`` with fitted hyperparameters on the grid (``WGPUCB``: ``discount="auto"`` unless given)."""
    if cls is WGPUCB:
        options.setdefault("discount", "auto")
    return cls(
        X, make_kernel("se", 1, 0.3), None, lam=0.01, beta=2.0, fit_hyperparameters=True, significance=significance,
        generator=torch.Generator().manual_seed(seed), **options,
    )  # fmt: skip


def fixed_policy(significance=0.01, cls=WGPUCB, **memory):
    """A fixed memory: ``discount=0.9`` unless another discount or a window is given."""
    return policy(significance, cls=cls, **(memory or {"discount": 0.9}))


def observe_rows(p, rows, sign_from, noise_seed=1):
    """A design of two rows, then one row at a time: ``sin(6x)`` until the ``sign_from``-th lone row, ``−sin(6x)``
    from it on (``sign_from=None``: never), with noise 0.05."""
    g = torch.Generator().manual_seed(noise_seed)
    idx = torch.randint(60, (2 + rows,), generator=g)
    sign = torch.ones(2 + rows, dtype=DT)
    if sign_from is not None:
        sign[2 + sign_from :] = -1.0
    Y = sign * torch.sin(6 * X[idx, 0]) + 0.05 * torch.randn(2 + rows, generator=g, dtype=DT)
    p.observe(X[idx[:2]], Y[:2].unsqueeze(-1))
    for i in range(2, 2 + rows):
        p.observe(X[idx[i : i + 1]], Y[i : i + 1].unsqueeze(-1))


def test_a_sign_flip_is_found_by_the_test_and_the_model_keeps_the_rows_since():
    p = policy()
    observe_rows(p, 36, sign_from=25)
    assert 27 <= p.since <= 29  # the first changed row is row 27 (2 design rows + 25)
    assert p.discount == 1.0 and p.diagnostics()["since"] == p.since
    assert p.model().train_inputs[0].shape[0] == 38 - p.since
    assert p.lam < 0.01  # the jump is not fitted as noise: the true variance is 0.0025
    # the fit while the change point is in force: every row, the rows before and since it sharing the hyperparameters
    seed = fit_seed(p.generator, p.train_X.shape[0])
    kernel, lam, c = fit_segments(p.train_X, p.rewards, p.since, make_kernel("se", 1, 0.3), standardize=True, like=X,
                                  seed=seed)  # fmt: skip
    torch.testing.assert_close(p.kernel.lengthscale, kernel.lengthscale)
    assert p.lam == pytest.approx(lam, rel=1e-12) and p.mean_constant == pytest.approx(c, rel=1e-12)
    plain = policy(significance=None)  # the competition alone keeps every row and explains the flip as noise
    observe_rows(plain, 36, sign_from=25)
    assert plain.since == 0 and plain.lam > 0.05


@pytest.mark.parametrize("memory", ["auto", 0.9])
def test_without_a_change_the_test_changes_nothing(memory):
    """Stationary: the test never passes, so every choice is the competition's (or the fixed discount's) alone."""
    make = policy if memory == "auto" else fixed_policy
    tested, plain = make(), make(significance=None)
    f = lambda i: float(torch.sin(6 * X[i, 0]))  # noqa: E731
    design = torch.tensor([5, 40])
    for p in (tested, plain):
        p.observe(X[design], torch.sin(6 * X[design]))
    for _ in range(25):
        i, j = tested.select(), plain.select()
        assert i == j
        tested.update(i, f(i))
        plain.update(j, f(j))
        assert tested.since == plain.since == 0
    assert tested.discount == plain.discount == (1.0 if memory == "auto" else 0.9)


def test_the_initial_design_is_never_split():
    rows = tested_change._Rows(torch.rand(20, 1, dtype=DT), torch.rand(20, dtype=DT), 6, make_kernel("se", 1), 0)
    assert rows.row_rounds.tolist() == [0] * 6 + list(range(1, 15))
    assert split_candidates(rows.row_rounds, 0, rows.warmup) == list(range(6 + WARMUP, 19))


def test_the_segments_are_botorch_models_fitted_from_the_policy_kernel():
    """The test's models are ``SingleTaskGP`` with ``Standardize`` fitted from BoTorch's start: the null model's
    likelihood is that of a vanilla model fitted under the same seed."""
    from botorch.models import SingleTaskGP

    from torch_advbandit.fitting import seeded_fit
    from torch_advbandit.policies.change_point_test import _log_likelihood

    g = torch.Generator().manual_seed(3)
    Xr = torch.rand(15, 2, dtype=DT, generator=g)
    Y = torch.sin(5 * Xr.sum(-1)) + 0.05 * torch.randn(15, generator=g, dtype=DT)
    rows = tested_change._Rows(Xr, Y, 2, make_kernel("matern52", 2), 7)
    vanilla = SingleTaskGP(Xr, Y.unsqueeze(-1), covar_module=make_kernel("matern52", 2).double().requires_grad_(True))
    seeded_fit(vanilla, 7)
    assert _log_likelihood(rows._gp()) == pytest.approx(_log_likelihood(vanilla), rel=1e-8)


def test_a_failing_test_leaves_the_policy_unchanged(monkeypatch):
    p = policy()
    observe_rows(p, 14, sign_from=None)
    before = p.state_dict()

    def boom(*args, **kwargs):
        raise RuntimeError("test failed")

    monkeypatch.setattr(tested_change, "detect_change", boom)
    with pytest.raises(RuntimeError, match="test failed"):
        p.observe(X[3:4], torch.zeros(1, 1, dtype=DT))
    same_state(before, p.state_dict())  # the fitted kernel's state too


def test_the_null_fit_is_the_weighted_fit_of_every_row_at_no_discount():
    """With no change accepted and ``η = 1`` the policy takes the test's stationary fit as its own: it is the fit
    ``fit_hyperparameters`` makes on every row at ``η = 1`` from the same start and seed (``WeightedStandardize``
    with equal weights, against BoTorch's ``Standardize``)."""
    from torch_advbandit.policies.adaptation import fit_hyperparameters

    g = torch.Generator().manual_seed(5)
    Xr = torch.rand(18, 2, dtype=DT, generator=g)
    Y = 4 + 3 * torch.sin(5 * Xr.sum(-1)) + 0.1 * torch.randn(18, generator=g, dtype=DT)
    kernel = make_kernel("matern52", 2)
    since, null = tested_change.accepted_change(Xr, Y, 2, kernel, 0.01, 11)
    assert since == 0
    reused = tested_change.null_hyperparameters(null, Xr)
    ages = torch.arange(17, -1, -1, dtype=DT)
    direct = fit_hyperparameters(Xr, Y, ages, kernel, None, 1.0, standardize=True, like=Xr, seed=11)
    assert reused[1] == pytest.approx(direct[1], rel=1e-5) and reused[2] == pytest.approx(direct[2], abs=1e-5)
    assert torch.allclose(reused[0].lengthscale, direct[0].lengthscale, rtol=1e-4)
    assert not reused[0].raw_lengthscale.requires_grad


def test_the_policy_fits_no_second_model_when_the_test_keeps_every_row(monkeypatch):
    from torch_advbandit.policies import gp_ucb_fit

    calls = []
    real = gp_ucb_fit.fit_hyperparameters
    monkeypatch.setattr(gp_ucb_fit, "fit_hyperparameters", lambda *a, **k: calls.append(1) or real(*a, **k))
    reused, plain = policy(), policy(significance=None)
    observe_rows(reused, 12, sign_from=None)
    assert calls == [] and reused.since == 0 and reused.discount == 1.0
    observe_rows(plain, 12, sign_from=None)
    assert len(calls) == 13  # the design, then every row
    assert reused.lam == pytest.approx(plain.lam, rel=1e-4)
    assert torch.allclose(reused.kernel.lengthscale, plain.kernel.lengthscale, rtol=1e-3)
    calls.clear()
    raw = policy(standardize=False)  # the test's fit is on standardised outcomes: the policy fits its own
    observe_rows(raw, 12, sign_from=None)
    assert len(calls) == 13


def test_a_failed_null_fit_is_not_reused(monkeypatch):
    from botorch.exceptions import ModelFittingError

    from torch_advbandit import fitting

    def failing(model, seed):
        raise ModelFittingError("no fit")

    monkeypatch.setattr(fitting, "seeded_fit", failing)
    g = torch.Generator().manual_seed(5)
    Xr = torch.rand(8, 1, dtype=DT, generator=g)
    with pytest.warns(RuntimeWarning, match="fit failed"):
        since, null = tested_change.accepted_change(Xr, torch.sin(6 * Xr[:, 0]), 2, make_kernel("se", 1), 0.01, 0)
    assert since == 0 and null is None


@pytest.mark.parametrize(
    "cls, memory",
    [(WGPUCB, {"discount": 0.9}), (WGPUCB, {"discount": 1.0}), (SlidingWindowGPUCB, {"window": 30})],
)
def test_a_fixed_memory_with_a_tested_change_keeps_its_memory_on_the_rows_since(cls, memory):
    """With a fixed discount (or window) the tested change cuts the rows before it; the memory's own forgetting
    still weighs (or windows) the rows since."""
    p = fixed_policy(cls=cls, **memory)
    observe_rows(p, 36, sign_from=25)
    assert 27 <= p.since <= 29  # the first changed row is row 27 (2 design rows + 25)
    assert p.discount == memory.get("discount", 1.0) and p.change_points.scored == 36
    assert p.model().train_inputs[0].shape[0] == 38 - p.since
    untested = fixed_policy(significance=None, cls=cls, **memory)
    observe_rows(untested, 36, sign_from=25)
    assert untested.since == 0 and untested.change_points.scored == 0
    assert untested.model().train_inputs[0].shape[0] == (38 if cls is WGPUCB else 30)


def test_a_fixed_discount_after_a_tested_change_survives_a_state_round_trip():
    p = fixed_policy()
    observe_rows(p, 36, sign_from=25)
    restored = fixed_policy()
    restored.load_state_dict(p.state_dict())
    assert restored.since == p.since > 0 and restored.change_points.scored == 36
    assert restored.select() == p.select()
    untested = fixed_policy(significance=None)  # a fixed memory without the test never holds a change point
    observe_rows(untested, 12, sign_from=None)
    state = untested.state_dict()
    state["since"] = 5
    with pytest.raises(ValueError, match=r"state\['since'\] > 0 \(a change point\) needs significance"):
        untested.load_state_dict(state)
    assert untested.since == 0 and untested.rewards.numel() == 14
