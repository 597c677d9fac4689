"""``WGPUCB(discount="auto", fit_hyperparameters=True, time_varying_significance=α)``: selections on the space-time
model of TimeVaryingGPUCB where its fitted forgetting rate passes the likelihood-ratio test
(torch_advbandit/policies/time_varying_selection.py)."""

import math

import pytest
import torch

from torch_advbandit import WGPUCB, TimeVaryingGPUCB
from torch_advbandit.kernels import make_kernel
from torch_advbandit.policies.time_varying_gp_ucb import critical_value
from torch_advbandit.policies.time_varying_selection import segment_correlated_model
from torch_advbandit.spacetime import AtTime

DT = torch.float64
X = torch.linspace(0, 1, 60, dtype=DT).unsqueeze(-1)
CRITICAL = critical_value(0.01)


def policy(seed=0, **options):
    options.setdefault("time_varying_significance", 0.01)
    return WGPUCB(
        X, make_kernel("se", 1, 0.3), None, discount="auto", lam=0.01, beta=2.0, fit_hyperparameters=True,
        generator=torch.Generator().manual_seed(seed), **options,
    )  # fmt: skip


def drifting(t: int, x: torch.Tensor) -> torch.Tensor:
    """``sin(6x + t/10)``: the optimum moves steadily."""
    return torch.sin(6 * x + t / 10)


def observe_drift(policies, rounds: int, noise_seed: int = 1) -> None:
    """A design of three rows observed together, then one row at a time, on ``drifting`` with noise 0.05."""
    g = torch.Generator().manual_seed(noise_seed)
    idx = torch.randint(60, (3 + rounds,), generator=g)
    Y = torch.stack([drifting(t, X[i, 0]) for t, i in enumerate(idx.tolist())])
    Y = Y + 0.05 * torch.randn(Y.shape, generator=g, dtype=DT)
    for p in policies:
        p.observe(X[idx[:3]], Y[:3].unsqueeze(-1))
        for t in range(3, 3 + rounds):
            p.observe(X[idx[t : t + 1]], Y[t : t + 1].unsqueeze(-1))


@pytest.fixture(scope="module")
def drifted_state():
    """The state of :func:`policy` after 20 rows of the drift, and the point it then selects."""
    p = policy()
    observe_drift([p], 20)
    state = p.state_dict()
    return state, p.select()


def drifted(saved):
    p = policy()
    p.load_state_dict(saved[0])
    return p


def test_where_the_test_passes_the_selection_is_time_varying_gp_ucb_s(drifted_state):
    p = drifted(drifted_state)
    tv = TimeVaryingGPUCB(X, make_kernel("se", 1, 0.3), None, beta=2.0, significance=0.01,
                          generator=torch.Generator().manual_seed(0))  # fmt: skip
    observe_drift([tv], 20)
    choice, theirs = p.select(), tv.model()
    statistic = p.diagnostics()["time_varying_statistic"]
    assert p.since == 0 and statistic > CRITICAL
    assert statistic == pytest.approx(tv.diagnostics()["lr_statistic"], rel=1e-9)
    with torch.no_grad():  # the UCB argmax of the space-time posterior at the next step (23 rows seen), computed here
        post = theirs.model.posterior(torch.cat([X, torch.full_like(X, 23.0)], -1))
        ucb = post.mean.squeeze(-1) + 2.0 * post.variance.squeeze(-1).sqrt()
    assert choice == int(ucb.argmax())
    plain = policy(time_varying_significance=None)  # the automatic memory alone selects elsewhere here
    observe_drift([plain], 20)
    assert plain.select() != choice


def test_where_nothing_moves_the_selections_are_the_automatic_memory_s():
    p, plain = policy(), policy(time_varying_significance=None)
    g = torch.Generator().manual_seed(3)
    design = torch.randint(60, (3,), generator=g)
    Y0 = torch.sin(6 * X[design]) + 0.05 * torch.randn(3, 1, generator=g, dtype=DT)
    p.observe(X[design], Y0)
    plain.observe(X[design], Y0)
    statistics = []
    for _ in range(14):
        i = p.select()
        assert i == plain.select()
        y = float(torch.sin(6 * X[i, 0]) + 0.05 * torch.randn((), generator=g, dtype=DT))
        p.update(i, y)
        plain.update(i, y)
        statistics.append(p.diagnostics()["time_varying_statistic"])
    tested = [s for s in statistics if not math.isnan(s)]
    assert len(tested) >= 4 and max(tested) < CRITICAL  # tested from the tenth distinct time on, never passed


def jumped(kind: str) -> WGPUCB:
    """:func:`policy` after 26 rows of ``sin(6x)`` (noise 0.05; two observed together, then one at a time), rows 16 on
    moved up by 3 (``"shift"``: the same function) or negated and moved up by 3 (``"flip"``): the competition of
    memories puts a change point at row 16."""
    p = policy()
    g = torch.Generator().manual_seed(1)
    idx = torch.randint(60, (26,), generator=g)
    Y = torch.sin(6 * X[idx, 0]) + 0.05 * torch.randn(26, generator=g, dtype=DT)
    Y[16:] = (Y[16:] if kind == "shift" else -Y[16:]) + 3.0
    p.observe(X[idx[:2]], Y[:2].unsqueeze(-1))
    for i in range(2, 26):
        p.observe(X[idx[i : i + 1]], Y[i : i + 1].unsqueeze(-1))
    return p


def test_under_a_change_point_the_segments_are_correlated_by_a_fitted_rho():
    shift, flip = jumped("shift"), jumped("flip")
    for p in (shift, flip):
        assert p.since == 16 and isinstance(p.selection_model(), AtTime)
        assert math.isnan(p.diagnostics()["time_varying_statistic"])  # no test of ε while a change point is in force
    # the same function on either side keeps the rows before the change; a negated one drops them
    assert shift.diagnostics()["segment_correlation"] > 0.9
    assert flip.diagnostics()["segment_correlation"] < 0.01
    plain = jumped("shift")
    plain.time_varying_significance = None  # the memory alone: its own selection differs here
    assert not isinstance(plain.selection_model(), AtTime)


def test_the_segment_model_is_the_dense_posterior_of_the_correlated_segments():
    p = jumped("flip")
    model, rho = segment_correlated_model(p)
    gp, later = model.model, torch.arange(26) >= 16
    assert rho == pytest.approx(math.exp(-1.0 / float(gp.covar_module.time.lengthscale)), rel=1e-12)
    y = p.rewards.clone()
    for rows in (~later, later):  # each segment standardised by its own mean and standard deviation
        y[rows] = (y[rows] - y[rows].mean()) / y[rows].std()
    s = later.to(DT)
    with torch.no_grad():  # GPML Alg. 2.1 on k_X(x, x')·ρ^|s − s'|, seen at s = 1, on BoTorch's standardised scale
        shift, scale = gp.outcome_transform.means.squeeze(), gp.outcome_transform.stdvs.squeeze()
        z, c = (y - shift) / scale, gp.mean_module.constant
        space = gp.covar_module.space
        K = space(p.train_X).to_dense() * rho ** (s[:, None] - s[None, :]).abs()
        L = torch.linalg.cholesky(K + gp.likelihood.noise.squeeze() * torch.eye(26, dtype=DT))
        k = space(X, p.train_X).to_dense() * rho ** (1.0 - s)
        v = torch.cholesky_solve((z - c).unsqueeze(-1), L).squeeze(-1)
        w = torch.linalg.solve_triangular(L, k.T, upper=False)
        mean, var = (c + k @ v) * scale + shift, (space(X, diag=True) - w.square().sum(0)) * scale**2
        post = model.posterior(X)
    torch.testing.assert_close(post.mean.squeeze(-1), mean, rtol=1e-8, atol=1e-8)
    torch.testing.assert_close(post.variance.squeeze(-1), var, rtol=1e-6, atol=1e-8)


def test_too_few_rows_since_the_change_point_leave_the_selection_to_the_memory():
    p = jumped("shift")
    assert segment_correlated_model(p)[0] is not None  # 10 rows since row 16
    p.since = 23  # 3 rows since it, fewer than 2(d + 1) = 4
    assert segment_correlated_model(p) == (None, pytest.approx(math.nan, nan_ok=True))
    assert not isinstance(p.selection_model(), AtTime)
    assert math.isnan(p.diagnostics()["segment_correlation"])


def test_asks_of_several_points_and_pending_ones_use_the_time_varying_model(drifted_state):
    p = drifted(drifted_state)
    first = p.select(2)
    more = p.select(1)
    assert first.shape == (2,) and more.shape == (1,)
    assert len(set(first.tolist()) | set(more.tolist())) == 3 and isinstance(p.selection_model(), AtTime)


def test_a_restored_state_selects_the_same_point(drifted_state):
    assert drifted(drifted_state).select() == drifted_state[1]  # the point the saved policy selected


@pytest.mark.parametrize(
    "options, match",
    [
        ({"time_varying_significance": 0.7}, "time_varying_significance must be a number in"),
        ({"time_varying_significance": True}, "time_varying_significance must be a number in"),
        ({"time_varying_significance": 0.01, "discount": 0.9}, "needs discount='auto' and fit_hyperparameters"),
        ({"time_varying_significance": 0.01, "fit_hyperparameters": False}, "needs discount='auto'"),
    ],
)
def test_bad_levels_and_memories_are_refused_naming_the_argument(options, match):
    kwargs = {"discount": "auto", "fit_hyperparameters": True, **options}
    with pytest.raises(ValueError, match=match):
        WGPUCB(X, make_kernel("se", 1, 0.3), None, lam=0.01, **kwargs)
