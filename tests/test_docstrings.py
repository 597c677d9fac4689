"""Every public function and class documents a runnable example (pytest runs them: ``--doctest-modules``)."""

import importlib
import inspect
import pkgutil

import torch_advbandit

MODULES = sorted(
    m.name
    for m in pkgutil.walk_packages(torch_advbandit.__path__, "torch_advbandit.")
    if not any(part.startswith("_") for part in m.name.split("."))
)


def public_objects(module):
    for name, obj in sorted(vars(module).items()):
        if name.startswith("_") or not (inspect.isfunction(obj) or inspect.isclass(obj)):
            continue
        if getattr(obj, "__module__", None) == module.__name__:
            yield name, obj


def test_every_public_name_has_an_example():
    missing = [
        f"{name}.{obj_name}"
        for name in MODULES
        for obj_name, obj in public_objects(importlib.import_module(name))
        if ">>>" not in (inspect.getdoc(obj) or "")
    ]
    assert not missing, f"public names without a '>>>' example: {missing}"
