"""Settings versus learned state: a policy's constructor arguments, captured once for every policy.

Every subclass of :class:`~torch_advbandit.policies.base.Policy` has its ``__init__`` wrapped so that
the arguments of each constructor in the chain are recorded, with their defaults, the first time
each name is seen (the outermost constructor, i.e. what the user passed, wins). The data and the
randomness — ``candidates``, ``kernel``, ``generator`` — are not settings. ``hyperparameters()``
returns the record; ``state_dict`` saves it and ``load_state_dict`` refuses a state whose
settings differ. As in scikit-learn, settings live apart from the learned state.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import torch

#: Constructor arguments that are data or randomness, not settings.
NOT_SETTINGS = frozenset({"self", "candidates", "kernel", "generator"})


def capture_settings(init: Callable, exclude: frozenset[str] = frozenset()) -> Callable:
    """Wrap a policy ``__init__`` so its arguments (defaults applied) join ``self._settings``.

    ``exclude`` names further arguments of this constructor that are data, not settings (e.g. the
    built estimator and ``π`` that a subclass hands to the Exp3 loop).

    Example:
        >>> class Demo:
        ...     @capture_settings
        ...     def __init__(self, candidates, horizon, *, eta=0.5, **kwargs):
        ...         pass
        >>> Demo(None, 10, beta=2)._settings
        {'horizon': 10, 'eta': 0.5, 'beta': 2}
    """
    signature = inspect.signature(init)

    @functools.wraps(init)
    def wrapper(self, *args, **kwargs):
        settings = self.__dict__.setdefault("_settings", {})
        bound = signature.bind(self, *args, **kwargs)
        bound.apply_defaults()
        for name, value in bound.arguments.items():
            kind = signature.parameters[name].kind
            items = value.items() if kind is inspect.Parameter.VAR_KEYWORD else [(name, value)]
            for key, item in items:
                if key == "kernel" and "_kernel_fingerprint" not in self.__dict__:
                    self._kernel_fingerprint = kernel_fingerprint(item)
                if key not in NOT_SETTINGS and key not in exclude and kind is not inspect.Parameter.VAR_POSITIONAL:
                    settings.setdefault(key, _frozen(item))
        init(self, *args, **kwargs)

    wrapper.__signature__ = signature
    return wrapper


def _frozen(value: Any) -> Any:
    return value.detach().clone() if isinstance(value, torch.Tensor) else value


def same_setting(a: Any, b: Any) -> bool:
    """Equality for settings: tensors by value (shape, dtype and entries), ``functools.partial`` by
    function and arguments, everything else by ``==``.

    Example:
        >>> from functools import partial
        >>> same_setting(partial(max, 1), partial(max, 1)), same_setting(torch.ones(2), torch.ones(2))
        (True, True)
    """
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return (
            isinstance(a, torch.Tensor)
            and isinstance(b, torch.Tensor)
            and a.shape == b.shape
            and a.dtype == b.dtype
            and torch.equal(a, b.to(a.device))
        )
    if isinstance(a, functools.partial) or isinstance(b, functools.partial):
        return (
            isinstance(a, functools.partial)
            and isinstance(b, functools.partial)
            and a.func is b.func
            and len(a.args) == len(b.args)
            and all(same_setting(x, y) for x, y in zip(a.args, b.args, strict=True))
            and same_settings(a.keywords, b.keywords)
        )
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - objects whose == is not a truth value are simply different
        return a is b


def same_settings(a: Any, b: dict[str, Any]) -> bool:
    """Whether two settings records hold the same names with :func:`same_setting` values.

    Example:
        >>> same_settings({"eta": 0.1}, {"eta": 0.1}), same_settings({"eta": 0.1}, {"eta": 0.2})
        (True, False)
    """
    return isinstance(a, dict) and a.keys() == b.keys() and all(same_setting(a[k], b[k]) for k in a)


def tensor_digest(x: torch.Tensor) -> int:
    """A digest of a tensor's values, computed on its device: the bit patterns, mixed and weighted by
    position, summed modulo ``2⁶⁴`` — exact whatever the reduction order, so the same on every machine,
    device and thread count (shape and dtype are compared separately).

    Example:
        >>> a = torch.tensor([0.1, 0.2], dtype=torch.float64)
        >>> tensor_digest(a) == tensor_digest(a.clone()), tensor_digest(a) == tensor_digest(a.flip(0))
        (True, False)
    """
    flat = x.detach().contiguous().reshape(-1)
    width = {8: torch.int64, 4: torch.int32, 2: torch.int16, 1: torch.int8}[flat.element_size()]
    bits = flat.view(width).to(torch.int64)
    bits = bits ^ (bits >> 29)
    weights = torch.arange(1, bits.numel() + 1, dtype=torch.int64, device=bits.device) * 0x2545F4914F6CDD1D
    return int((bits * (weights | 1)).sum())


def kernel_fingerprint(kernel: Any) -> tuple:
    """What identifies a kernel: its modules' types (and Matérn ``ν``) and the digests of its parameters.

    Example:
        >>> from torch_advbandit.kernels import make_kernel
        >>> kernel_fingerprint(make_kernel("se", 1)) == kernel_fingerprint(make_kernel("se", 1))
        True
        >>> kernel_fingerprint(make_kernel("se", 1)) == kernel_fingerprint(make_kernel("se", 1, lengthscale=0.2))
        False
    """
    if not isinstance(kernel, torch.nn.Module):
        return (type(kernel).__name__,)
    modules = tuple((name, type(m).__name__, getattr(m, "nu", None)) for name, m in kernel.named_modules())
    params = tuple((n, tuple(p.shape), tensor_digest(p.to(torch.float64))) for n, p in kernel.named_parameters())
    return modules + params
