"""Continuous domains: a finite candidate set for a box, and the map to the unit cube the kernels assume."""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import torch
from botorch.utils.transforms import normalize, unnormalize
from torch.quasirandom import SobolEngine

from ._validation import check_generator_type, check_int

METHODS = ("grid", "sobol")


@dataclass(frozen=True)
class Discretization:
    """A finite candidate set of a box ``bounds`` (``2 × d``), in the box and in the unit cube.

    Attributes:
        bounds: ``Tensor[2, d]``, lower and upper corners.
        unit: ``Tensor[m, d]`` in ``[0, 1]^d``: give these to the policies and kernels.
        points: ``Tensor[m, d]`` in the box: evaluate the objective here (``points[i]`` for index ``i``).

    Example:
        >>> from torch_advbandit.domains import discretize
        >>> D = discretize(torch.tensor([[-5.0, 0.0], [10.0, 15.0]], dtype=torch.float64), 16)
        >>> D.unit.shape, D.points.shape
        (torch.Size([16, 2]), torch.Size([16, 2]))
        >>> torch.allclose(D.from_unit(D.unit), D.points)
        True
    """

    bounds: torch.Tensor
    unit: torch.Tensor
    points: torch.Tensor

    def to_unit(self, X: torch.Tensor) -> torch.Tensor:
        """Box → unit cube (BoTorch's ``normalize``)."""
        return normalize(X, self.bounds)

    def from_unit(self, U: torch.Tensor) -> torch.Tensor:
        """Unit cube → box (BoTorch's ``unnormalize``)."""
        return unnormalize(U, self.bounds)


def discretize(
    bounds: torch.Tensor,
    n: int,
    method: str | None = None,
    *,
    seed: int | None = None,
    generator: torch.Generator | None = None,
) -> Discretization:
    """Finite candidates for the box ``bounds`` (the ε-net of [Iwazaki2026], Sec. 2 remark).

    The regret bounds hold on a finite set; on a continuous domain with a Lipschitz (or RKHS)
    objective, a grid of mesh ``ε`` adds at most ``O(ε·T)`` regret, so ``ε ≍ T^{-1/2}`` —
    ``|X̃| = O(T^{d/2})`` points — keeps the ``Õ(sqrt(T γ_T))`` rate ([Iwazaki2026], Sec. 2). Kernels here
    assume the unit cube (lengthscale ``0.3·sqrt(d)``): use ``unit`` as the candidates and
    ``points`` (or ``from_unit``) to evaluate.

    Args:
        bounds: ``Tensor[2, d]`` with ``bounds[0] < bounds[1]``; its dtype and device are used.
        n: target number of points. ``"grid"``: ``m = ⌊n^{1/d}⌋`` points per axis (``m^d ≤ n``
            points, ends included); ``"sobol"``: ``n`` points of a scrambled Sobol sequence.
        method: ``"grid"`` or ``"sobol"``; by default a grid in ``d ≤ 3`` when it has at least
            half the points asked for, Sobol otherwise (in ``d = 6`` a grid of ``n = 4000`` has
            ``3⁶ = 729`` points; in ``d = 10``, ``n = 3000`` gives the ``2¹⁰`` corners). A
            ``RuntimeWarning`` says when the set returned has another size than ``n``.
        seed: scrambling seed for ``"sobol"``.
        generator: a ``torch.Generator`` to draw the scrambling seed from, when ``seed`` is not
            given (one integer is drawn, only for ``"sobol"``). With neither, the scrambling comes
            from PyTorch's global generator, as ``SobolEngine(seed=None)`` and BoTorch's
            ``draw_sobol_samples`` do.

    Example:
        >>> D = discretize(torch.tensor([[-5.0, 0.0], [10.0, 15.0]], dtype=torch.float64), 400)
        >>> D.unit.shape, float(D.points[:, 0].min()), float(D.points[:, 0].max())
        (torch.Size([400, 2]), -5.0, 10.0)
    """
    if not isinstance(bounds, torch.Tensor) or bounds.ndim != 2 or bounds.shape[0] != 2 or bounds.shape[1] < 1:
        raise ValueError("bounds must be a Tensor[2, d]")
    if not bounds.is_floating_point() or not bool(torch.isfinite(bounds).all()):
        raise ValueError("bounds must be finite floating-point values")
    if not bool((bounds[1] > bounds[0]).all()):
        raise ValueError("bounds must satisfy bounds[0] < bounds[1] in every dimension")
    n = check_int(n, "n", minimum=1)
    if seed is not None:
        seed = check_int(seed, "seed", minimum=0)
    if generator is not None:
        check_generator_type(generator)
    if seed is not None and generator is not None:
        raise ValueError("give seed or generator, not both")
    d = bounds.shape[1]
    m = max(1, math.floor(n ** (1.0 / d) + 1e-9))
    if method is None:
        method = "grid" if d <= 3 and 2 * m**d >= n else "sobol"
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    like = dict(dtype=bounds.dtype, device=bounds.device)
    if method == "grid":
        if m**d != n:
            warnings.warn(
                f"discretize: a grid has m^d points; {m}^{d} = {m**d} returned for n = {n} "
                "(method='sobol' returns exactly n)",
                RuntimeWarning,
                stacklevel=2,
            )
        axis = torch.linspace(0.0, 1.0, m, **like) if m > 1 else torch.full((1,), 0.5, **like)
        unit = torch.cartesian_prod(*([axis] * d)).reshape(-1, d)
    else:
        if seed is None and generator is not None:
            seed = int(torch.randint(0, 2**62, (1,), generator=generator, device=generator.device))
        unit = SobolEngine(d, scramble=True, seed=seed).draw(n, dtype=bounds.dtype).to(bounds.device)
    return Discretization(bounds, unit, unnormalize(unit, bounds))
