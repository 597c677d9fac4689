import math

import pytest

from torch_advbandit.parameters import information_gain_bound, paper_parameters


def test_information_gain_bounds_match_formulas():
    T = 1000
    assert information_gain_bound("se", T, 2) == pytest.approx(math.log(T) ** 3 / math.log(math.log(T)) ** 2)
    for name, nu in [("matern52", 2.5), ("matern32", 1.5)]:
        d = 2
        want = T ** (d / (2 * nu + d)) * math.log(T) ** ((4 * nu + d) / (2 * nu + d))
        assert information_gain_bound(name, T, d) == pytest.approx(want)


def test_paper_parameters():
    g = information_gain_bound("matern52", 500, 1)
    p = paper_parameters("matern52", 500, 1)
    assert p["eta"] == pytest.approx(10.0 / math.sqrt(500 * g))
    assert p["alpha"] == pytest.approx(min(1.0, 0.1 * p["eta"] * g))
    assert p["lam"] == 10.0 and p["beta"] == pytest.approx(2.0 * math.sqrt(10.0 / 500))
    rls = paper_parameters("matern52", 500, 1, algorithm="rls_kernelized_exp3")
    assert rls["beta"] == pytest.approx((1 + math.sqrt(2)) * p["beta"])
    with pytest.raises(ValueError, match="horizon"):
        paper_parameters("se", 2, 1)
    with pytest.raises(ValueError, match="kernel_name"):
        paper_parameters("rbf", 100, 1)
