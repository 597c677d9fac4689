"""The drifting benchmark's problems: each ``f_t`` against the BoTorch test function evaluated directly."""

import pytest
import torch

from torch_advbandit.experiments.botorch_drift import (
    BENCHMARK_PROBLEMS,
    HELD_OUT_PROBLEMS,
    PROBLEM_NAMES,
    problem_values,
)

FUNCTIONS = {
    "branin": lambda tf: tf.Branin(),
    "hartmann6": lambda tf: tf.Hartmann(dim=6),
    "levy4": lambda tf: tf.Levy(dim=4),
    "hartmann3": lambda tf: tf.Hartmann(dim=3),
    "styblinskitang3": lambda tf: tf.StyblinskiTang(dim=3),
}


def test_the_held_out_problems_are_apart_from_the_benchmark_s():
    assert set(PROBLEM_NAMES) == set(FUNCTIONS)
    assert not set(BENCHMARK_PROBLEMS) & set(HELD_OUT_PROBLEMS)


@pytest.mark.parametrize("problem", PROBLEM_NAMES)
def test_every_scenario_is_the_test_function_or_its_reflection_standardised_over_the_candidates(problem):
    import botorch.test_functions as tf

    T, n = 10, 128
    X, F = problem_values(problem, "abrupt", T, n)
    function = FUNCTIONS[problem](tf)
    lo, hi = function.bounds.double()
    assert X.shape == (n, function.dim) and F.shape == (T, n)
    raw = -function.evaluate_true(lo + (hi - lo) * X)  # larger is better
    mirrored = -function.evaluate_true(lo + (hi - lo) * (1 - X))
    base = (raw - raw.mean()) / raw.std()
    flipped = (mirrored - raw.mean()) / raw.std()
    torch.testing.assert_close(F[: T // 2], base.expand(T // 2, n))
    torch.testing.assert_close(F[T // 2 :], flipped.expand(T - T // 2, n))
    assert int(F[0].argmax()) != int(F[-1].argmax())  # the jump moves the optimum
    _, drift = problem_values(problem, "drift", T, n)
    s = torch.arange(T, dtype=X.dtype).unsqueeze(-1) / T
    torch.testing.assert_close(drift, (1 - s) * base + s * flipped)
    _, still = problem_values(problem, "stationary", T, n)
    torch.testing.assert_close(still, base.expand(T, n))
