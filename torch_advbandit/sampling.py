"""Exact sampling from a distribution given by its log-probabilities."""

from __future__ import annotations

import torch


def sample_from_log_probs(log_probs: torch.Tensor, generator: torch.Generator, num_samples: int = 1) -> torch.Tensor:
    """Draw ``num_samples`` indices i.i.d. from ``P ∝ exp(log_probs)`` by the Gumbel-max trick.

    ``argmax_x (log P(x) + G_x)`` with ``G_x`` i.i.d. standard Gumbel has law ``P`` exactly,
    whatever the normalisation of ``log_probs`` (so unnormalised weights ``exp(η·S)`` that would
    overflow or underflow are fine). Unlike inverse-CDF sampling nothing is accumulated, so a
    probability is never lost to rounding in a running sum, and unlike ``torch.multinomial``
    there is no limit on the number of categories (``n ≥ 2^24`` on CUDA works). The Gumbel noise
    is drawn in float64 on ``log_probs``' device from ``generator``; the only deviation from
    the exact law comes from the 53-bit resolution of the uniforms, which caps the reachable
    noise at about 36.7 and so under-samples only probabilities below about ``1e-16`` of the
    largest one (an absolute error below ``1e-16`` per draw).

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
    n = log_probs.shape[-1]
    u = torch.rand(num_samples, n, generator=generator, dtype=torch.float64, device=log_probs.device)
    gumbel = -torch.log(-torch.log(u))
    return torch.argmax(log_probs.to(torch.float64).unsqueeze(0) + gumbel, dim=-1)
