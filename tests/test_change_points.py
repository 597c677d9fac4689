"""Change-point candidates of ``discount="auto"`` (every row since ``τ``): their scores against dense BoTorch
posteriors, the robust predictive density, pruning, the choice of memory, and the policy around them."""

import math

import pytest
import torch
from conftest import DT

from torch_advbandit import WGPUCB
from torch_advbandit.discount_selection import (
    OUTLIER_SPREAD,
    SCORE_MEMORY,
    NewRow,
    predictive_log_likelihood,
    weighted_stats,
)
from torch_advbandit.kernels import kernel_matrix, make_kernel
from torch_advbandit.models import fixed_noise_gp
from torch_advbandit.policies.change_points import CHANGE_PENALTY, MAX_RECENT, WARMUP, ChangePoints


def _history(m=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    X = torch.rand(m, 1, generator=g, dtype=DT)
    Y = torch.sin(5 * X.squeeze(-1)) + 0.1 * torch.randn(m, generator=g, dtype=DT)
    return X, Y


def _dense_log_p(X, Y, x, y, k, lam, eps, stats=None, prior_mean=0.0):
    """log[(1 − ε)N(y; μ, v) + εN(y; μ, Wv)] from a BoTorch posterior on the rows ``(X, Y)`` standardised by their
    own statistics (or ``stats``); the prior with no rows."""
    mean, std = stats if stats is not None else weighted_stats(Y, torch.zeros_like(Y))
    if X.shape[0]:
        y_model = ((Y - mean) / std).unsqueeze(-1)
        noise = torch.full_like(y_model, lam / std**2)
        post = fixed_noise_gp(X, y_model, noise, k, prior_mean).posterior(x)
        mu, var = mean + std * float(post.mean), std**2 * float(post.variance) + lam
    else:
        mu, var = mean + std * prior_mean, std**2 * float(k(x, x).to_dense()) + lam
    normal = torch.distributions.Normal(torch.tensor(mu, dtype=DT), torch.tensor(var, dtype=DT).sqrt())
    broad = torch.distributions.Normal(torch.tensor(mu, dtype=DT), torch.tensor(OUTLIER_SPREAD * var, dtype=DT).sqrt())
    y = torch.tensor(y, dtype=DT)
    return float(torch.logaddexp(math.log(1 - eps) + normal.log_prob(y), math.log(eps) + broad.log_prob(y)))


def test_the_robust_predictive_density_is_the_two_component_mixture():
    X, Y = _history()
    k = make_kernel("se", 1, 0.3)
    x = torch.tensor([[0.37]], dtype=DT)
    K, k_new = kernel_matrix(k, X, X), kernel_matrix(k, X, x).squeeze(-1)
    ages = torch.zeros(8, dtype=DT)
    for y in (0.2, 4.0, -30.0):  # near, far, an outlier
        lp, _ = predictive_log_likelihood(
            K, k_new, 1.0, Y, ages, y, 0.01, 1.0, standardize=True, outlier_probability=0.05
        )
        assert lp == pytest.approx(_dense_log_p(X, Y, x, y, k, 0.01, 0.05), rel=1e-9, abs=1e-9)
    # an outlier costs about log(1/ε) + ½ log W + z²/(2W), not z²/2
    gauss, z2 = predictive_log_likelihood(K, k_new, 1.0, Y, ages, -30.0, 0.01, 1.0, standardize=True)
    robust, _ = predictive_log_likelihood(K, k_new, 1.0, Y, ages, -30.0, 0.01, 1.0, standardize=True,
                                          outlier_probability=0.05)  # fmt: skip
    assert z2 > 1e3 and robust - gauss > 0.4 * z2


def test_no_past_row_predicts_with_the_prior():
    k = make_kernel("se", 1, 0.3)
    empty = torch.empty(0, dtype=DT)
    lp, z2 = predictive_log_likelihood(torch.empty(0, 0, dtype=DT), empty, 1.0, empty, empty, 0.5, 0.1, 1.0,
                                       standardize=True, stats=(0.2, 2.0), prior_mean=0.1)  # fmt: skip
    var, mu = 4.0 * 1.0 + 0.1, 0.2 + 2.0 * 0.1
    assert lp == pytest.approx(-0.5 * (math.log(2 * math.pi * var) + (0.5 - mu) ** 2 / var), rel=1e-12)
    assert z2 == pytest.approx((0.5 - mu) ** 2 / var)
    assert _dense_log_p(torch.empty(0, 1, dtype=DT), empty, torch.zeros(1, 1, dtype=DT), 0.5, k, 0.1, 1e-300,
                        stats=(0.2, 2.0), prior_mean=0.1) == pytest.approx(lp, rel=1e-9)  # fmt: skip


def test_change_point_scores_match_dense_posteriors_on_the_rows_since_each_point():
    X, Y = _history(m=8)
    k = make_kernel("se", 1, 0.3)
    lam, eps, x, y = 0.01, 0.05, torch.tensor([[0.61]], dtype=DT), 0.4
    K, k_new = kernel_matrix(k, X, X), kernel_matrix(k, X, x).squeeze(-1)
    points = ChangePoints(torch.tensor([3, 7]), torch.tensor([-2.0, -1.0], dtype=DT), torch.ones(2, dtype=DT), WARMUP)
    discounts = torch.linspace(-4, 2, 7, dtype=DT)  # the best discount score is 2
    calibration = torch.linspace(0.5, 2.0, 7, dtype=DT)
    new = points.observed(discounts, calibration, NewRow(K, k_new, 1.0, Y, y, lam, standardize=True))
    assert new.positions.tolist() == [3, 7, 8]
    all_stats = weighted_stats(Y, torch.zeros_like(Y))
    entry = [-2.0, -1.0, 2.0]  # the new candidate starts from the best competing score
    for j, tau in enumerate([3, 7, 8]):
        stats = all_stats if 8 - tau < 2 else None  # fewer than two rows: the scale of every row
        dense = _dense_log_p(X[tau:], Y[tau:], x, y, k, lam, eps, stats=stats)
        assert float(new.scores[j]) == pytest.approx(SCORE_MEMORY * entry[j] + dense, rel=1e-9)
    assert float(new.calibration[-1]) == float(calibration[-1])  # uncalibrated: the entry calibration, unchanged


def test_only_the_newest_points_and_the_best_older_one_are_kept():
    X, Y = _history(m=40)
    k = make_kernel("se", 1, 0.3)
    K = kernel_matrix(k, X, X)
    positions = torch.arange(1, 40)
    scores = torch.full((39,), -50.0, dtype=DT)
    scores[4] = -1.0  # τ = 5: the best of the old ones
    points = ChangePoints(positions, scores, torch.ones(39, dtype=DT), 39)
    x = torch.tensor([[0.5]], dtype=DT)
    row = NewRow(K, kernel_matrix(k, X, x).squeeze(-1), 1.0, Y, 0.0, 0.01)
    new = points.observed(torch.zeros(7, dtype=DT), torch.ones(7, dtype=DT), row)
    assert new.positions.tolist() == [5] + list(range(40 - MAX_RECENT + 1, 41))


def test_change_points_enter_only_once_the_calibration_has_warmed_up():
    X, Y = _history(m=12)
    k = make_kernel("se", 1, 0.3)
    K, k_new = kernel_matrix(k, X, X), kernel_matrix(k, X, torch.tensor([[0.5]], dtype=DT)).squeeze(-1)
    args = (torch.zeros(7, dtype=DT), torch.ones(7, dtype=DT), NewRow(K, k_new, 1.0, Y, 9.0, 0.01, standardize=True))
    early = ChangePoints.none()
    for _ in range(WARMUP):  # a far-off value, again and again: no change point yet
        early = early.observed(*args)
    assert early.positions.numel() == 0 and early.scored == WARMUP
    assert early.observed(*args).positions.tolist() == [12]
    empty = NewRow(K[:0, :0], k_new[:0], 1.0, Y[:0], 9.0, 0.01, standardize=True)
    assert ChangePoints.none().observed(*args[:2], empty).scored == 0  # nothing to score


def test_the_prior_odds_against_a_change_are_not_forgotten():
    X, Y = _history(m=12)
    k = make_kernel("se", 1, 0.3)
    K, k_new = kernel_matrix(k, X, X), kernel_matrix(k, X, torch.tensor([[0.5]], dtype=DT)).squeeze(-1)
    points = ChangePoints(torch.tensor([4]), torch.tensor([7.0], dtype=DT), torch.ones(1, dtype=DT), WARMUP)
    discounts = torch.tensor([1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], dtype=DT)
    new = points.observed(discounts, torch.ones(7, dtype=DT), NewRow(K, k_new, 1.0, Y, 0.3, 0.01))
    prior = _dense_log_p(X[:0], Y[:0], torch.tensor([[0.5]], dtype=DT), 0.3, k, 0.01, 0.05, stats=(0.0, 1.0))
    # τ = 12 entered from τ = 4's competing score, 7 − P > 1 (the best discount), and predicted from the prior
    assert float(new.scores[-1]) == pytest.approx(SCORE_MEMORY * (7.0 - CHANGE_PENALTY) + prior, rel=1e-9)
    assert torch.equal(new.competing(discounts)[7:], new.scores - CHANGE_PENALTY)  # the penalty, undecayed


def test_the_choice_is_the_longest_memory_within_the_margin():
    points = ChangePoints(
        torch.tensor([10, 25]), torch.tensor([0.0, 0.5], dtype=DT) + CHANGE_PENALTY, torch.ones(2, dtype=DT), 30
    )
    discounts = torch.tensor([-9.0, -9.0, -2.2, -9.0, -9.0, -9.0, 1.0], dtype=DT)  # η = 1, …, 0.5
    assert points.chosen(discounts, 30, margin=0.0) == (0.5, 0)  # the best
    assert points.chosen(discounts, 30, margin=1.0) == (1.0, 10)  # 20 rows since τ = 10 beat 5 and 2
    assert points.chosen(discounts, 30, margin=3.5) == (0.97, 0)  # η = 0.97 remembers ~33 rows
    assert points.chosen(torch.zeros(7, dtype=DT), 30, margin=3.0) == (1.0, 0)
    early = ChangePoints(points.positions, points.scores, points.calibration, WARMUP)
    assert early.chosen(discounts, 30, margin=0.0) == (1.0, 0)  # not yet warmed up: every row


def _jump_run(rounds=40, jump=30, seed=0):
    X = torch.linspace(0, 1, 60, dtype=DT).unsqueeze(-1)
    policy = WGPUCB(X, make_kernel("se", 1, 0.15), rounds, discount="auto", lam=1e-3, beta=1.0,
                    fit_hyperparameters=True, generator=torch.Generator().manual_seed(seed))  # fmt: skip
    noise = torch.Generator().manual_seed(seed + 1)
    for t in range(rounds):
        i = policy.select()
        f = math.sin(6 * float(X[i, 0])) * (1 if t < jump else -2)
        policy.update(i, f + 0.05 * float(torch.randn((), generator=noise)))
    return policy


def test_after_a_jump_the_model_holds_exactly_the_rows_since_it_and_the_state_round_trips():
    policy = _jump_run()
    since = policy.since
    assert policy.discount == 1.0 and 30 <= since <= 35  # a change point at or just after the jump
    assert policy.training_set().tolist() == list(range(since, 40))
    assert torch.equal(policy.model().train_inputs[0], policy.train_X[since:])
    assert policy.diagnostics()["since"] == float(since)
    state = policy.state_dict()
    twin = WGPUCB(policy.candidates, make_kernel("se", 1, 0.15), 40, discount="auto", lam=1e-3, beta=1.0,
                  fit_hyperparameters=True, generator=torch.Generator().manual_seed(5))  # fmt: skip
    twin.load_state_dict(state)
    assert twin.since == since and torch.equal(twin.change_points.positions, policy.change_points.positions)
    assert twin.select() == policy.select()


@pytest.mark.parametrize(
    "change, match",
    [
        (dict(change_points=torch.tensor([5, 3])), "change_points"),
        (dict(change_points=torch.tensor([1.0, 2.0])), "change_points"),
        (dict(change_scores=torch.tensor([float("nan")])), "change_scores"),
        (dict(since=41), "since"),
        (dict(since=3, discount=0.5), "since"),
        (dict(change_scored=-1), "change_scored"),
    ],
)
def test_a_bad_change_point_state_is_named_and_changes_nothing(change, match):
    policy = _jump_run()
    state = policy.state_dict()
    if "change_scores" in change:
        change = dict(change, change_points=state["change_points"][:1], change_calibration=torch.ones(1, dtype=DT))
    before = policy.state_dict()
    with pytest.raises(ValueError, match=match):
        policy.load_state_dict(dict(state, **change))
    assert policy.since == before["since"] and torch.equal(policy.change_points.positions, before["change_points"])
    assert torch.equal(policy.rewards, before["rewards"])


def test_batches_of_asks_are_scored_row_by_row_and_a_change_enters_only_between_batches():
    # an initial design of 6 rows (not scored: rows observed together before any other), then 24 rounds of
    # select(2); the objective jumps at round 15, i.e. before row 6 + 2·15 = 36
    X = torch.linspace(0, 1, 60, dtype=DT).unsqueeze(-1)
    policy = WGPUCB(X, make_kernel("se", 1, 0.15), None, discount="auto", lam=1e-3, beta=1.0,
                    fit_hyperparameters=True, generator=torch.Generator().manual_seed(0))  # fmt: skip
    noise = torch.Generator().manual_seed(1)

    def values(x, t):
        f = torch.sin(6 * x) * (1 if t < 15 else -2)
        return f + 0.05 * torch.randn(f.shape, generator=noise, dtype=DT)

    design = X[::10]
    policy.observe(design, values(design, 0))
    assert policy.change_points.scored == 0
    sinces = []
    for t in range(24):
        asks = policy.select(2)
        policy.observe(X[asks], values(X[asks], t))
        assert policy.change_points.scored == 2 * (t + 1)  # both rows of every batch are scored
        assert all((p - 6) % 2 == 0 for p in policy.change_points.positions.tolist())  # batch starts only
        sinces.append(policy.since)
    assert sinces[:15] == [0] * 15 and sinces[15] == 36  # every row before the jump, then the rows since it
    assert all(since >= 36 for since in sinces[15:])  # from then on, rows observed after the jump only
    assert policy.training_set().tolist() == list(range(sinces[-1], 54))
