import math

import torch

from torch_advbandit.sampling import sample_from_log_probs


def chi_square_statistic(counts, probs, draws):
    expected = probs * draws
    return float(((counts - expected) ** 2 / expected).sum())


def test_frequencies_match_probabilities(device):
    probs = torch.tensor([0.5, 0.25, 0.125, 0.0625, 0.0625], dtype=torch.float64, device=device)
    gen = torch.Generator(device=device).manual_seed(0)
    draws = 200_000
    idx = sample_from_log_probs(probs.log(), gen, draws)
    counts = torch.bincount(idx, minlength=5).double()
    # chi-square with 4 degrees of freedom: the 0.999 quantile is 18.47
    assert chi_square_statistic(counts, probs, draws) < 18.47


def test_unnormalised_and_extremely_skewed_log_weights():
    gen = torch.Generator().manual_seed(1)
    # weights exp(η·S) with S ~ 1e5 would overflow; log-space sampling does not care
    log_w = torch.tensor([1e5, 1e5 + math.log(3.0), -1e5], dtype=torch.float64)
    idx = sample_from_log_probs(log_w, gen, 40_000)
    counts = torch.bincount(idx, minlength=3).double()
    assert counts[2] == 0
    assert abs(float(counts[1] / counts.sum()) - 0.75) < 0.01
    # probabilities of 1e-30 are never drawn in a feasible number of draws, -inf never
    log_p = torch.tensor([0.0, math.log(1e-30), -math.inf], dtype=torch.float64)
    assert (sample_from_log_probs(log_p, gen, 10_000) == 0).all()


def test_more_than_2_pow_24_categories():
    n = 2**24 + 3
    log_p = torch.full((n,), -math.inf, dtype=torch.float64)
    log_p[n - 1] = 0.0
    log_p[n - 2] = math.log(1e-3)
    out = sample_from_log_probs(log_p, torch.Generator().manual_seed(2), 1)
    assert int(out) in (n - 1, n - 2)


def test_the_race_resolves_probabilities_down_to_1e_30():
    from torch_advbandit.sampling import exponential_race, fine_uniform

    log_p = torch.log(torch.tensor([1e-30, 1.0 - 1e-30], dtype=torch.float64))
    e1 = torch.tensor(0.6321205588285577, dtype=torch.float64)  # v giving E ≈ 1 for the large category
    # category 0 wins exactly when E_0 / 1e-30 < E_1, i.e. v_0 ≲ 1e-30: both sides of the threshold resolve
    assert exponential_race(log_p, torch.stack([torch.tensor(0.5e-30, dtype=torch.float64), e1]).unsqueeze(0)) == 0
    assert exponential_race(log_p, torch.stack([torch.tensor(2.0e-30, dtype=torch.float64), e1]).unsqueeze(0)) == 1
    v = fine_uniform(4, 200_000, torch.Generator().manual_seed(0), torch.device("cpu"))
    assert bool((v > 0).all() & (v < 1).all())
    # near 0 the fine part is really there: v·2^53 is not an integer (torch.rand gives multiples of 2^-53)
    small = v[v < 2.0**-10]
    assert small.numel() > 500 and bool(((small * 2.0**53) % 1 != 0).double().mean() > 0.99)
    # and v is uniform: mean 1/2, P(v < 0.1) = 0.1
    assert abs(float(v.mean()) - 0.5) < 3e-3 and abs(float((v < 0.1).double().mean()) - 0.1) < 3e-3
