"""What an SGLang release's source tree says about its config classes, read with ``ast`` (never
imported): which module defines each class, a class's ``model_type``, and the classes its
``configs/*.py`` register with transformers themselves.

Only the standard library: the per-release scripts (``release_state.py``, run in each release's
own interpreter) import it by file, and the package's oracle (``states.py``) as a module.
"""

from __future__ import annotations

import ast
from pathlib import Path


def class_modules(root: Path) -> dict[str, str]:
    """Class name -> module, from ``sglang/srt/configs/__init__.py``'s imports in ``root``."""
    found: dict[str, str] = {}
    init = root / "sglang/srt/configs/__init__.py"
    for node in ast.parse(init.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                found[alias.asname or alias.name] = node.module
    return found


def class_model_type(path: Path, name: str) -> str | None:
    """The ``model_type = "..."`` class attribute of the class ``name`` in ``path`` (``None``:
    no such file, class or attribute)."""
    if not path.is_file():
        return None
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            for item in node.body:
                target = (
                    item.targets[0]
                    if isinstance(item, ast.Assign)
                    else item.target
                    if isinstance(item, ast.AnnAssign)
                    else None
                )
                value = getattr(item, "value", None)
                if (
                    isinstance(target, ast.Name)
                    and target.id == "model_type"
                    and isinstance(value, ast.Constant)
                ):
                    return str(value.value)
    return None


def self_registered(root: Path) -> list[tuple[str, str, str]]:
    """``(model_type, module, class)`` of each config class that registers itself with
    transformers instead of being in ``_CONFIG_REGISTRY``, in file order:
    ``CONFIG_MAPPING._extra_content["x"] = Cls`` and ``AutoConfig.register("x" |
    Cls.model_type, Cls, ...)`` in ``sglang/srt/configs/*.py`` (lfm2, lfm2_moe, lfm2_vl, zaya,
    ...). A model type may appear twice; the caller decides which wins."""
    found: list[tuple[str, str, str]] = []
    for path in sorted((root / "sglang/srt/configs").glob("*.py")):
        module = f"sglang.srt.configs.{path.stem}"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            key: ast.expr | None = None
            cls: ast.expr | None = None
            if (
                isinstance(node, ast.Assign)
                and isinstance(node.targets[0], ast.Subscript)
                and ast.unparse(node.targets[0].value).endswith("_extra_content")
            ):
                key, cls = node.targets[0].slice, node.value
            elif (
                isinstance(node, ast.Call)
                and ast.unparse(node.func).endswith("AutoConfig.register")
                and len(node.args) >= 2
            ):
                key, cls = node.args[0], node.args[1]
            if key is None or not isinstance(cls, ast.Name):
                continue
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                model_type: str | None = key.value
            else:
                model_type = class_model_type(path, cls.id)
            if model_type:
                found.append((model_type, module, cls.id))
    return found
