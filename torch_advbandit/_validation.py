"""Argument checks shared by every public entry point.

Each check raises ``TypeError`` (wrong kind of object) or ``ValueError`` (right kind, bad value)
with a message that names the argument and the expected form.
"""

from __future__ import annotations

import math
import numbers

import torch

#: Largest magnitude accepted for a candidate coordinate: squared distances must stay finite.
MAX_ABS_COORDINATE = 1e100
#: Largest magnitude accepted for a reward: estimates (reward × up to ``T/λ``) summed over rounds,
#: and GP posteriors, must stay far inside float64's range (docs/robustness.rst).
MAX_ABS_REWARD = 1e100


def check_candidates(candidates: object, name: str = "candidates") -> torch.Tensor:
    """Return ``candidates`` after checking it is a float32/float64 ``Tensor[n, d]`` with n ≥ 1 and
    finite coordinates of magnitude at most :data:`MAX_ABS_COORDINATE`."""
    if not isinstance(candidates, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor of shape (n, d), got {type(candidates).__name__}")
    if candidates.ndim != 2:
        raise ValueError(f"{name} must have shape (n, d), got shape {tuple(candidates.shape)}")
    if candidates.shape[0] < 1 or candidates.shape[1] < 1:
        raise ValueError(f"{name} must have n ≥ 1 rows and d ≥ 1 columns, got {tuple(candidates.shape)}")
    if not candidates.is_floating_point():
        raise TypeError(f"{name} must be a floating-point tensor, got dtype {candidates.dtype}")
    if candidates.dtype not in (torch.float32, torch.float64):
        raise TypeError(f"{name} must be float64 (or float32, an explicit choice), got dtype {candidates.dtype}")
    if not bool((candidates.abs() <= MAX_ABS_COORDINATE).all()):  # NaN compares False
        raise ValueError(f"{name} must be finite with |coordinates| ≤ {MAX_ABS_COORDINATE:g} (no NaN or inf entries)")
    return candidates


#: Largest confidence width ``β`` (and ``beta_scale``) accepted: BoTorch squares it.
MAX_CONFIDENCE_WIDTH = 1e100


def check_width(value: object, name: str, *, allow_zero: bool = True) -> float:
    """Return ``value`` as a float after checking ``0 ≤ value ≤ MAX_CONFIDENCE_WIDTH`` (``0 < value`` unless
    ``allow_zero``)."""
    value = check_positive(value, name, allow_zero=allow_zero)
    if value > MAX_CONFIDENCE_WIDTH:
        raise ValueError(f"{name} must be at most {MAX_CONFIDENCE_WIDTH:g}, got {value:g}")
    return value


def check_reward(value: object, name: str = "reward") -> float:
    """Return ``value`` as a float after checking it is a finite real with ``|value| ≤ MAX_ABS_REWARD``."""
    value = check_real(value, name)
    if abs(value) > MAX_ABS_REWARD:
        raise ValueError(f"{name} must have magnitude at most {MAX_ABS_REWARD:g}, got {value:g}")
    return value


def check_positive(value: object, name: str, *, allow_zero: bool = False) -> float:
    """Return ``value`` as a float after checking it is a finite real number > 0 (or ≥ 0)."""
    value = check_real(value, name)
    if value < 0 or (value == 0 and not allow_zero):
        bound = "≥ 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be {bound}, got {value}")
    return value


def check_real(value: object, name: str) -> float:
    """Return ``value`` as a float after checking it is a finite real scalar."""
    if isinstance(value, torch.Tensor):
        if value.numel() != 1 or value.is_complex() or value.dtype == torch.bool:
            raise TypeError(f"{name} must be a real scalar, got a tensor of shape {tuple(value.shape)}")
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    return value


def check_choice(value: object, choices: tuple, name: str) -> None:
    """Raise ``ValueError`` unless ``value`` is one of ``choices``."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {choices}, got {value!r}")


def check_unit_interval(value: object, name: str) -> float:
    """Return ``value`` as a float after checking ``0 < value ≤ 1``."""
    value = check_real(value, name)
    if not 0.0 < value <= 1.0:
        raise ValueError(f"{name} must lie in (0, 1], got {value}")
    return value


def check_significance(value: object, name: str = "significance") -> float | None:
    """Return ``value`` (a test's level, the argument ``name``) after checking it is ``None`` or a number in
    ``(0, 0.5)``."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 0.5):
        raise ValueError(f"{name} must be a number in (0, 0.5) or None, got {value!r}")
    return value


def check_int(value: object, name: str, *, minimum: int | None = None) -> int:
    """Return ``value`` as an int after checking it is an integer (and ≥ ``minimum``)."""
    if isinstance(value, torch.Tensor):
        if value.numel() != 1 or value.is_floating_point() or value.dtype == torch.bool:
            raise TypeError(f"{name} must be an integer, got a tensor of dtype {value.dtype}")
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be ≥ {minimum}, got {value}")
    return value


def check_index(value: object, n: int, name: str = "index") -> int:
    """Return ``value`` as an int after checking ``0 ≤ value < n``."""
    value = check_int(value, name)
    if not 0 <= value < n:
        raise ValueError(f"{name} must lie in [0, {n}), got {value}")
    return value


def check_probs(
    probs: object, n: int, like: torch.Tensor, name: str = "probs", *, normalized: bool = True
) -> torch.Tensor:
    """Return ``probs`` after checking it is a non-negative finite ``Tensor[n]`` on ``like``'s device.

    With ``normalized`` (a distribution such as ``P_t``) the sum must be 1 to ``max(1e-6, 100·n·ε)``;
    otherwise (weights) any positive sum is accepted.
    """
    if not isinstance(probs, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor of shape ({n},), got {type(probs).__name__}")
    if probs.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},), got {tuple(probs.shape)}")
    if probs.device != like.device:
        raise ValueError(f"{name} is on {probs.device} but candidates are on {like.device}")
    if not bool(torch.isfinite(probs).all()) or bool((probs < 0).any()):
        raise ValueError(f"{name} must be finite and non-negative")
    total = float(probs.sum())
    if total <= 0:
        raise ValueError(f"{name} must have a positive sum")
    if normalized and abs(total - 1.0) > max(1e-6, 100 * n * torch.finfo(probs.dtype).eps):
        raise ValueError(f"{name} must sum to 1 (a distribution over the candidates), got sum {total:.6g}")
    return probs.to(like.dtype)


def check_generator_type(generator: object) -> torch.Generator:
    """Return ``generator`` after checking it is a ``torch.Generator`` (on any device)."""
    if not isinstance(generator, torch.Generator):
        raise TypeError(f"generator must be a torch.Generator, got {type(generator).__name__}")
    return generator


def check_generator(generator: object, device: torch.device) -> torch.Generator:
    """Return a ``torch.Generator`` on ``device``.

    ``None`` gives a fresh generator seeded from PyTorch's global RNG, so ``torch.manual_seed``
    still makes a run reproducible.
    """
    if generator is None:
        seed = int(torch.randint(0, 2**62, (1,), device="cpu").item())  # the global (CPU) RNG
        return torch.Generator(device=device).manual_seed(seed)
    check_generator_type(generator)
    if torch.device(generator.device).type != torch.device(device).type:
        raise ValueError(
            f"generator is on {generator.device} but candidates are on {device}; "
            f"pass torch.Generator(device={str(device)!r})"
        )
    return generator
