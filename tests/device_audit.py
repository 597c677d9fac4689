"""A CPU stand-in for a CUDA run: tensors the library creates without naming a device.

On a CUDA run, a tensor that ``torch_advbandit`` builds with ``torch.zeros(...)``,
``torch.tensor(...)``, ``torch.arange(...)`` … and no ``device=`` lands on the CPU and then
meets the candidates on the GPU: a crash, or a silent host round trip. Without a GPU that bug is
invisible, because the CPU *is* the default device. :class:`LibraryDeviceAudit` makes it
visible on the CPU: while it is active, every such call made *from the library's own code*
(not from PyTorch, GPyTorch, BoTorch or the test) gets ``device="meta"``, and any later
arithmetic with a CPU tensor fails with "Tensor on device meta is not on the expected device
cpu". It also records ``Tensor.cpu()`` / ``Tensor.numpy()`` calls made from the library's hot
paths, and floating tensors the library creates without a ``dtype=`` (PyTorch's float32 default,
not the candidates' float64). The ``device`` fixture's ``cpu-audit`` parameter runs each device-aware test under it.
"""

import os
import sys

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._device import _device_constructors

import torch_advbandit

PACKAGE_DIR = os.path.dirname(torch_advbandit.__file__) + os.sep
# Modules that only do CPU bookkeeping (records, tables, plots, the command line) by design.
HOST_SIDE = tuple(os.path.join(PACKAGE_DIR, m) for m in ("experiments" + os.sep, "cli.py"))
TORCH_DIR = os.path.dirname(torch.__file__) + os.sep
HOST_METHODS = {torch.Tensor.cpu, torch.Tensor.numpy}


def _library_caller():
    """File and line of the nearest frame outside PyTorch, if it is the library's own code."""
    frame = sys._getframe(2)
    while frame is not None and frame.f_code.co_filename.startswith(TORCH_DIR):
        frame = frame.f_back
    if frame is None:
        return None
    name = frame.f_code.co_filename
    if name.startswith(PACKAGE_DIR) and not name.startswith(HOST_SIDE):
        return f"{os.path.relpath(name, os.path.dirname(PACKAGE_DIR))}:{frame.f_lineno}"
    return None


class LibraryDeviceAudit(TorchFunctionMode):
    """Send device-less tensor constructors called from ``torch_advbandit`` to ``meta``.

    ``host_calls`` lists the ``.cpu()`` / ``.numpy()`` calls made from the library (file:line), and
    ``default_dtype_calls`` the floating tensors it created in PyTorch's default dtype (float32) for
    want of a ``dtype=``: values rounded to float32 before they meet float64 candidates.

    Example:
        >>> with LibraryDeviceAudit() as audit:
        ...     x = torch.zeros(3)  # from a test: untouched
        >>> x.device.type, audit.host_calls
        ('cpu', [])
    """

    def __init__(self):
        super().__init__()
        self.host_calls = []
        self.default_dtype_calls = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if func in _device_constructors():
            where = _library_caller()
            if where is None:
                return func(*args, **kwargs)
            if "device" not in kwargs:
                kwargs["device"] = "meta"
            out = func(*args, **kwargs)
            if "dtype" not in kwargs and out.is_floating_point() and out.dtype == torch.get_default_dtype():
                self.default_dtype_calls.append(where)  # float32 by default: not the candidates' dtype
            return out
        if func in HOST_METHODS:
            where = _library_caller()
            if where is not None:
                self.host_calls.append(where)
        return func(*args, **kwargs)
