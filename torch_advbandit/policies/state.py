"""Checks for the parts of a saved policy state: tensors shaped like the policy's, generator states."""

from __future__ import annotations

from typing import Any

import torch


def checked_generator_state(value: Any, generator: torch.Generator) -> torch.Tensor:
    """``value`` if it is a state this generator accepts (tried on a scratch generator), else ``ValueError``.

    Example:
        >>> g = torch.Generator()
        >>> checked_generator_state(g.get_state(), g).dtype
        torch.uint8
    """
    scratch = torch.Generator(device=generator.device)
    try:
        scratch.set_state(value)
    except (RuntimeError, TypeError) as exc:
        raise ValueError(f"state['generator_state'] is not a state of a {generator.device} generator: {exc}") from exc
    return value


def state_tensor(state: dict[str, Any], key: str, like: torch.Tensor) -> torch.Tensor:
    """Fetch ``state[key]`` as a tensor shaped and placed like ``like``.

    Example:
        >>> like = torch.zeros(3, dtype=torch.float64)
        >>> state_tensor({"weights": torch.tensor([1.0, 2.0, 3.0])}, "weights", like).dtype
        torch.float64
    """
    value = state.get(key)
    if not isinstance(value, torch.Tensor) or value.shape != like.shape:
        raise ValueError(f"state[{key!r}] must be a tensor of shape {tuple(like.shape)}")
    if not bool(torch.isfinite(value).all()):
        raise ValueError(f"state[{key!r}] must be finite")
    return value.detach().to(dtype=like.dtype, device=like.device).clone()
