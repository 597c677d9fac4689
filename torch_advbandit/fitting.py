"""BoTorch's hyperparameter fit with its random restarts under a policy's seed.

``fit_gpytorch_mll`` starts from the model's current hyperparameters; when an attempt fails (an
optimisation warning, an error) it retries from hyperparameters sampled from the priors, drawn from
PyTorch's *global* generator. A policy's fits must not read or move that generator: its choices
would then depend on what else ran in the process (a resumed sweep would not repeat a trial). So
every fit runs under ``torch.random.fork_rng`` seeded from the policy's generator and round, and
the global generator is put back afterwards.
"""

from __future__ import annotations

import warnings

import torch


def fit_seed(generator: torch.Generator, t: int) -> int:
    """The seed of a policy's fit in round ``t``: a function of the generator's initial seed and ``t`` only
    (it draws nothing, so the generator's own stream is unchanged).

    Example:
        >>> g = torch.Generator().manual_seed(3)
        >>> fit_seed(g, 5) == fit_seed(torch.Generator().manual_seed(3), 5) != fit_seed(g, 6)
        True
    """
    return (generator.initial_seed() * 1_000_003 + t) % (2**63 - 1)


def seeded_fit(model, seed: int) -> None:
    """``fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))`` with BoTorch's optimisation
    warnings silenced and its restarts' prior samples drawn under ``seed``; PyTorch's global generator (and
    the CUDA one of ``model``'s device) is as before afterwards. Raises what BoTorch raises
    (``ModelFittingError`` when every attempt fails).

    Example:
        >>> from botorch.models import SingleTaskGP
        >>> X = torch.linspace(0, 1, 8, dtype=torch.float64).unsqueeze(-1)
        >>> model = SingleTaskGP(X, torch.sin(6 * X))
        >>> before = torch.get_rng_state()
        >>> seeded_fit(model, 0)
        >>> torch.equal(before, torch.get_rng_state()), model.training
        (True, False)
    """
    from botorch.fit import fit_gpytorch_mll
    from gpytorch.mlls import ExactMarginalLogLikelihood

    device = next(model.parameters()).device
    devices = [device] if device.type == "cuda" else []
    with torch.random.fork_rng(devices=devices), warnings.catch_warnings():
        torch.manual_seed(seed)
        warnings.simplefilter("ignore")  # BoTorch's optimisation warnings: callers check the fit
        fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))


def fit_or_keep_start(model, seed: int, *, stacklevel: int = 2) -> bool:
    """:func:`seeded_fit` on ``model``; where BoTorch's fit fails (``ModelFittingError``) the model keeps the
    hyperparameters it started from, with a ``RuntimeWarning``. Its hyperparameters are frozen afterwards.
    Returns whether the fit succeeded.

    Example:
        >>> from botorch.models import SingleTaskGP
        >>> X = torch.linspace(0, 1, 8, dtype=torch.float64).unsqueeze(-1)
        >>> model = SingleTaskGP(X, torch.sin(6 * X))
        >>> fit_or_keep_start(model, 0), any(p.requires_grad for p in model.parameters())
        (True, False)
    """
    from botorch.exceptions import ModelFittingError

    try:
        seeded_fit(model, seed)
    except ModelFittingError as exc:
        warnings.warn(
            f"hyperparameter fit failed ({exc}); using the initial ones", RuntimeWarning, stacklevel=stacklevel + 1
        )
        return False
    finally:
        model.requires_grad_(False)
    return True
