"""The average over memories of ``discount="auto"`` with fitted hyperparameters: the mixture's moments against Monte
Carlo draws, the weights against the scores, and every member against a dense BoTorch posterior built here."""

import copy
import math

import pytest
import torch

from torch_advbandit import WGPUCB
from torch_advbandit.discount_selection import AUTO_DISCOUNTS, AUTO_MARGIN
from torch_advbandit.factored_gp import FactoredGP
from torch_advbandit.kernels import make_kernel
from torch_advbandit.memory_average import MIN_WEIGHT, AveragedGP, held_row, memory_weights
from torch_advbandit.models import fixed_noise_gp
from torch_advbandit.policies.change_points import CHANGE_PENALTY

DT = torch.float64


def _two_gps():
    g = torch.Generator().manual_seed(0)
    X = torch.rand(6, 2, dtype=DT, generator=g)
    k = make_kernel("se", 2, 0.4)
    noise = torch.full((6, 1), 0.01, dtype=DT)
    a = fixed_noise_gp(X, torch.sin(4 * X[:, :1]), noise, k)
    b = fixed_noise_gp(X[:4], -2 * torch.cos(3 * X[:4, 1:]), noise[:4], k, mean_constant=0.5)
    return a, b


def test_the_average_has_the_mixtures_mean_and_joint_covariance_monte_carlo():
    a, b = _two_gps()
    weights = [0.3, 0.7]
    X = torch.rand(3, 2, dtype=DT, generator=torch.Generator().manual_seed(1))  # q = 3 points, jointly
    post = AveragedGP([a, b], weights).posterior(X)
    g = torch.Generator().manual_seed(2)
    n = 400_000
    with torch.no_grad():
        pa, pb = a.posterior(X).distribution, b.posterior(X).distribution
        pick = torch.rand(n, generator=g, dtype=DT) < weights[0]
        z = torch.randn(n, 3, generator=g, dtype=DT)
        la = torch.linalg.cholesky(pa.covariance_matrix + 1e-12 * torch.eye(3, dtype=DT))
        lb = torch.linalg.cholesky(pb.covariance_matrix + 1e-12 * torch.eye(3, dtype=DT))
        draws = torch.where(pick.unsqueeze(-1), pa.mean + z @ la.mT, pb.mean + z @ lb.mT)
    mean = draws.mean(0)
    cov = torch.cov(draws.T)
    assert torch.allclose(post.mean.squeeze(-1), mean, atol=4e-3)
    assert torch.allclose(post.distribution.covariance_matrix, cov, atol=4e-3)
    assert float(torch.linalg.eigvalsh(post.distribution.covariance_matrix).min()) > -1e-10


def test_one_member_is_that_members_posterior_and_qucb_runs_on_the_average():
    from botorch.acquisition import qUpperConfidenceBound
    from botorch.optim import optimize_acqf_discrete

    a, b = _two_gps()
    X = torch.rand(5, 1, 2, dtype=DT, generator=torch.Generator().manual_seed(3))
    one, alone = AveragedGP([a], [1.0]).posterior(X), a.posterior(X)
    assert torch.allclose(one.mean, alone.mean, atol=1e-12) and torch.allclose(one.variance, alone.variance, atol=1e-12)
    noisy = AveragedGP([a], [1.0]).posterior(X, observation_noise=True)
    assert torch.allclose(noisy.variance, a.posterior(X, observation_noise=True).variance, atol=1e-12)
    choices = torch.rand(30, 2, dtype=DT, generator=torch.Generator().manual_seed(4))
    acqf = qUpperConfidenceBound(AveragedGP([a, b], [0.5, 0.5]), beta=4.0)
    with torch.no_grad():
        batch, _ = optimize_acqf_discrete(acqf, q=3, choices=choices)
    assert batch.shape == (3, 2) and len({tuple(r.tolist()) for r in batch}) == 3


def test_memory_weights_are_the_softmax_of_the_scores_with_the_prior_for_every_row_and_drop_small_ones():
    scores = torch.tensor([-1.0, 0.5, -2.0, -40.0], dtype=DT)
    lengths = [math.inf, 10.0, 3.0, 2.0]
    got = dict(memory_weights(scores, lengths, prior=AUTO_MARGIN))
    raw = [math.exp(-1.0 + AUTO_MARGIN), math.exp(0.5), math.exp(-2.0), math.exp(-40.0)]
    total = sum(raw)
    kept = [i for i in range(4) if raw[i] / total >= MIN_WEIGHT]
    assert sorted(got) == kept == [0, 1, 2]
    for i in kept:
        assert got[i] == pytest.approx(raw[i] / sum(raw[j] for j in kept), rel=1e-12)
    with pytest.raises(ValueError, match="scores must have shape"):
        memory_weights(scores, lengths[:3], prior=0.0)


def _jumped(seed=0, rounds=40, jump=30):
    """WGP-UCB, discount='auto', fitted, on sin(6x) that turns into −2 sin(6x) after ``jump`` rounds."""
    X = torch.linspace(0, 1, 60, dtype=DT).unsqueeze(-1)
    policy = WGPUCB(X, make_kernel("se", 1, 0.15), rounds, discount="auto", lam=1e-3, beta=1.0,
                    fit_hyperparameters=True, generator=torch.Generator().manual_seed(seed))  # fmt: skip
    noise = torch.Generator().manual_seed(seed + 1)
    averaged_rounds = 0
    for t in range(rounds):
        i = policy.select()
        f = math.sin(6 * float(X[i, 0])) * (1 if t < jump else -2)
        policy.update(i, f + 0.05 * float(torch.randn((), generator=noise)))
        averaged_rounds += len(policy.averaged_memories()) > 1
    return policy, averaged_rounds


def _member(policy, eta, since):
    """The memory ``(η, since)``'s posterior built here: the rows since ``since``, noise ``λ η^{-age}``, outcomes
    standardised by their ``η^{age}``-weighted mean and unbiased std (every row's, equal weights, with fewer than two
    rows after a change point), the policy's kernel and constant mean."""
    m = policy.train_X.shape[0]
    X, Y = policy.train_X[since:], policy.rewards[since:]
    age = torch.arange(m - 1 - since, -1, -1, dtype=DT)
    noise = policy.lam * torch.tensor(eta, dtype=DT) ** (-age)
    if since > 0 and m - since < 2:
        v, source = torch.full((m,), 1.0 / m, dtype=DT), policy.rewards
    else:
        v, source = torch.tensor(eta, dtype=DT) ** age, Y
        v = v / v.sum()
    mean = float(v @ source)
    std = math.sqrt(float(v @ (source - mean) ** 2) / (1 - float(v @ v)))
    return fixed_noise_gp(X, ((Y - mean) / std).unsqueeze(-1), (noise / std**2).unsqueeze(-1), policy.kernel,
                          policy.mean_constant)  # fmt: skip


def test_after_a_jump_selections_average_the_memories_each_a_dense_botorch_posterior():
    policy, averaged_rounds = _jumped()
    assert averaged_rounds >= 5
    model = policy.selection_model()
    assert isinstance(model, AveragedGP) and len(model.members) >= 2
    # the weights, from the scores as they compete (change points less the prior odds against a change)
    m = policy.train_X.shape[0]
    positions = policy.change_points.positions.tolist()
    memories = [(eta, 0) for eta in AUTO_DISCOUNTS] + [(1.0, tau) for tau in positions]
    scores = policy.discount_scores.tolist() + (policy.change_points.scores - CHANGE_PENALTY).tolist()
    raw = [math.exp(s + (AUTO_MARGIN if (eta == 1.0 and since == 0) else 0.0)) for s, (eta, since) in
           zip(scores, memories, strict=True)]  # fmt: skip
    kept = [i for i in range(len(raw)) if raw[i] / sum(raw) >= MIN_WEIGHT]
    expected = {memories[i]: raw[i] / sum(raw[j] for j in kept) for i in kept}
    got = dict(policy.averaged_memories())
    assert got.keys() == expected.keys()
    for memory, w in expected.items():
        assert got[memory] == pytest.approx(w, rel=1e-9)
    assert any(since >= 30 for _, since in got) and (1.0, 0) in got  # the old and the new objective
    # the mixture of the members built here, and the UCB argmax on it
    X = policy.candidates.unsqueeze(1)
    with torch.no_grad():
        posts = [(_member(policy, *memory).posterior(X), w) for memory, w in expected.items() if m - memory[1] >= 1]
        mean = sum(w * p.mean.squeeze(-1).squeeze(-1) for p, w in posts)
        second = sum(w * (p.variance + p.mean**2).squeeze(-1).squeeze(-1) for p, w in posts)
        ours = model.posterior(X)
    assert torch.allclose(ours.mean.squeeze(-1).squeeze(-1), mean, atol=1e-7)
    assert torch.allclose(ours.variance.squeeze(-1).squeeze(-1), second - mean**2, atol=1e-7)
    ucb = mean + policy.confidence_width(model) * (second - mean**2).clamp_min(0).sqrt()
    assert policy.select() == int(ucb.argmax())


def test_no_average_without_fitted_hyperparameters_nor_while_a_tested_change_is_in_force():
    X = torch.linspace(0, 1, 60, dtype=DT).unsqueeze(-1)
    plain = WGPUCB(X, make_kernel("se", 1, 0.15), 40, discount="auto", lam=1e-3, beta=1.0,
                   generator=torch.Generator().manual_seed(0))  # fmt: skip
    tested = WGPUCB(X, make_kernel("se", 1, 0.15), 40, discount="auto", lam=1e-3, beta=1.0, fit_hyperparameters=True,
                    significance=0.01, generator=torch.Generator().manual_seed(0))  # fmt: skip
    noise = torch.Generator().manual_seed(1)
    found = False
    for t in range(40):
        for policy in (plain, tested):
            i = policy.select()
            f = math.sin(6 * float(X[i, 0])) * (1 if t < 25 else -2)
            policy.update(i, f + 0.05 * float(torch.randn((), generator=noise)))
        assert plain.averaged_memories() == [] and isinstance(plain.selection_model(), FactoredGP)
        if tested.since > 0:
            found = True
            assert tested.averaged_memories() == [] and isinstance(tested.selection_model(), FactoredGP)
    assert found  # the test accepted the jump


def test_the_average_yields_to_the_chosen_memory_where_its_pick_is_the_row_of_16_of_the_last_20_observations(
    monkeypatch,
):
    """Once 16 of the last 20 lone rows sit at one candidate, a pick of that candidate by the average is replaced by
    the chosen memory's own UCB (its posterior checked against a dense BoTorch one); any other pick, or a candidate
    of 15 of the 20, keeps the average."""
    policy, _ = _jumped(rounds=36)
    X = policy.candidates
    held = next(i for i in range(60) if not (policy.train_X == X[i]).all(-1).any())  # a candidate not observed yet
    for r in range(20):
        i = held if r != 4 else (held + 30) % 60  # every new row but the fifth at `held`
        policy.observe(X[i : i + 1], torch.tensor([[math.sin(6 * float(X[i, 0])) * -2]], dtype=DT))
        if r == 15:  # 15 of the last 20 at `held`
            assert held_row(policy.train_X[-20:]) is None
            monkeypatch.setattr(policy, "_ucb_argmax", lambda model: (held, 1.0))
            assert isinstance(policy.selection_model(), AveragedGP)
            monkeypatch.undo()
    assert torch.equal(held_row(policy.train_X[-20:]), X[held]) and len(policy.averaged_memories()) >= 2
    monkeypatch.setattr(policy, "_ucb_argmax", lambda model: (held + 1, 1.0))  # the average picks another candidate
    assert isinstance(policy.selection_model(), AveragedGP)
    monkeypatch.setattr(policy, "_ucb_argmax", lambda model: (held, 1.0))  # the average picks the held candidate
    own = policy.selection_model()
    assert isinstance(own, FactoredGP)
    dense = _member(policy, policy.discount, policy.since)
    with torch.no_grad():
        a, b = own.posterior(X.unsqueeze(1)), dense.posterior(X.unsqueeze(1))
    assert torch.allclose(a.mean, b.mean, atol=1e-7) and torch.allclose(a.variance, b.variance, atol=1e-7)
    monkeypatch.undo()  # unpatched: the average's own UCB argmax decides
    seen, argmax = [], policy._ucb_argmax

    def spy(model):
        seen.append((type(model), argmax(model)[0]))
        return seen[-1][1], 1.0

    monkeypatch.setattr(policy, "_ucb_argmax", spy)
    model = policy.selection_model()
    assert [kind for kind, _ in seen] == [AveragedGP]
    assert isinstance(model, FactoredGP if seen[0][1] == held else AveragedGP)


def test_select_takes_the_average_pick_selection_model_computed_and_picks_what_a_second_pass_would(monkeypatch):
    """With a held row in the window and the average picking another candidate, ``select`` uses the average's UCB
    argmax that ``selection_model`` computed (one acquisition pass, not two), and picks exactly what a second pass on
    a copy of the policy picks."""
    policy, _ = _jumped(rounds=36)
    X = policy.candidates
    held = next(i for i in range(60) if not (policy.train_X == X[i]).all(-1).any())
    for _ in range(16):
        policy.observe(X[held : held + 1], torch.tensor([[math.sin(6 * float(X[held, 0])) * -2]], dtype=DT))
    passes = []

    def first_elsewhere(model):  # the first pass picks another candidate, any later one the held row
        passes.append(model)
        return (held + 1 if len(passes) == 1 else held), 1.0

    monkeypatch.setattr(policy, "_ucb_argmax", first_elsewhere)
    assert policy.select() == held + 1 and len(passes) == 1 and isinstance(passes[0], AveragedGP)
    monkeypatch.undo()
    policy.update(held + 1, 0.0)
    assert torch.equal(held_row(policy.train_X[-20:]), X[held])
    twin = copy.deepcopy(policy)
    model = twin.selection_model()
    assert policy.select() == twin._ucb_argmax(model)[0]


def test_held_row_needs_16_of_the_last_20_rows():
    a, b = torch.zeros(1, 2, dtype=DT), torch.ones(1, 2, dtype=DT)
    assert held_row(torch.cat([a] * 16)).tolist() == [0.0, 0.0] and held_row(torch.cat([a] * 15)) is None
    assert held_row(torch.cat([a] * 16 + [b] * 4)).tolist() == [0.0, 0.0]
    assert held_row(torch.cat([a] * 16 + [b] * 5)) is None  # the first row left the window
    assert held_row(torch.cat([b] * 10 + [a] * 16)).tolist() == [0.0, 0.0] and held_row(torch.zeros(0, 2)) is None
