"""Exact sampling from a distribution given by its log-probabilities."""

from __future__ import annotations

import torch


def fine_uniform(num_samples: int, n: int, generator: torch.Generator, device: torch.device) -> torch.Tensor:
    """``U(0, 1)`` float64 draws, ``Tensor[num_samples, n]``, resolved down to ``2^-159 ≈ 1.4e-48`` near 0.

    ``v = u₁ + 2^-53·(u₂ + 2^-53·u₃)`` with ``u_i`` the 53-bit uniforms of ``torch.rand``: exactly
    uniform on the grid of step ``2^-159``, so events of probability down to ``1e-45`` are
    represented (``torch.rand`` alone stops at ``2^-53 ≈ 1.1e-16``).

    Example:
        >>> u = fine_uniform(2, 1000, torch.Generator().manual_seed(0), torch.device("cpu"))
        >>> u.shape, bool(((u > 0) & (u < 1)).all())
        (torch.Size([2, 1000]), True)
    """
    shape = (3, num_samples, n)
    u = torch.rand(shape, generator=generator, dtype=torch.float64, device=device)
    tiny = 2.0**-53
    return (u[0] + tiny * (u[1] + tiny * u[2])).clamp_max_(1.0 - tiny)


def exponential_race(log_probs: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """``argmax_x log P(x) − log E_x`` with ``E = −log1p(−v)``: the index each row of ``v`` (``Tensor[m, n]``) draws.

    Example:
        >>> log_p = torch.log(torch.tensor([0.7, 0.2, 0.1], dtype=torch.float64))
        >>> v = fine_uniform(20000, 3, torch.Generator().manual_seed(0), torch.device("cpu"))
        >>> draws = exponential_race(log_p, v)
        >>> torch.bincount(draws, minlength=3).double().div(20000).round(decimals=2).tolist()
        [0.7, 0.2, 0.1]
    """
    exponential = -torch.log1p(-v)  # v near 0 gives E ≈ v at full relative precision
    return torch.argmax(log_probs.to(torch.float64).unsqueeze(0) - torch.log(exponential), dim=-1)


def sample_from_log_probs(log_probs: torch.Tensor, generator: torch.Generator, num_samples: int = 1) -> torch.Tensor:
    """Draw ``num_samples`` indices i.i.d. from ``P ∝ exp(log_probs)`` by an exponential race.

    ``argmin_x E_x / P(x)`` with ``E_x`` i.i.d. ``Exp(1)`` has law ``P`` exactly, for any
    normalisation of ``log_probs`` (so unnormalised weights ``exp(η·S)`` that would overflow or
    underflow are fine); it is the Gumbel-max trick ``argmax_x log P(x) − log E_x``. Unlike
    inverse-CDF sampling nothing is accumulated, so no probability is lost to rounding in a running
    sum, and unlike ``torch.multinomial`` there is no limit on the number of categories
    (``n ≥ 2^24`` on CUDA works). ``E = −log1p(−v)`` with ``v`` from :func:`fine_uniform`: a
    category of probability ``p`` wins when ``E_x ≲ p``, so the law is exact for probabilities
    down to about ``1e-45`` of the largest (``torch.rand`` alone would stop at ``1e-16``).

    Args:
        log_probs: ``Tensor[n]``; ``-inf`` entries are never drawn.
        generator: a ``torch.Generator`` on ``log_probs``' device.
        num_samples: number of independent draws.

    Returns:
        ``LongTensor[num_samples]`` on ``log_probs``' device.

    Example:
        >>> g = torch.Generator().manual_seed(0)
        >>> sample_from_log_probs(torch.log(torch.tensor([0.2, 0.8])), g, 3).shape
        torch.Size([3])
    """
    return exponential_race(log_probs, fine_uniform(num_samples, log_probs.shape[-1], generator, log_probs.device))
