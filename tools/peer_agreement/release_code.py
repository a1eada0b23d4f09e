"""Run one vLLM release's own top-level definitions, AST-extracted from its tree, with no torch.

``ReleaseCode(tree)`` is a namespace into which chosen classes and functions of the release's
files are executed from their source (compiled under the file's own name, so a traceback or a
citation names ``vllm-X.Y.Z:path:line``). Nothing is re-implemented except what process state
and torch would give (each stand-in below says what it stands for): dtypes with their sizes,
``cdiv``/``round_up``, a logger that keeps its lines, and bare modules for the imports that
functions make inside their bodies. Annotations are not evaluated.

This is the harness of the research notes (``notes/vllm-early/harness/vllm_harness.py``),
generalised to every release and family; it never imports a package ``__init__``.
"""

from __future__ import annotations
import __future__ as future_flags

import ast
import builtins
import collections
import contextlib
import copy
import dataclasses
import enum
import functools
import importlib
import importlib.util
import math
import sys
import types
import typing
from collections.abc import Iterable
from typing import Any

from .release_tree import ReleaseTree

__all__ = ["TORCH", "Dtype", "Log", "ReleaseCode"]

GIB = 1 << 30


class Dtype:
    """A torch dtype as sizing code uses it: a name and ``itemsize``."""

    def __init__(self, name: str, size: int) -> None:
        self.name, self.itemsize = name, size

    def __repr__(self) -> str:
        return f"torch.{self.name}"


TORCH = types.ModuleType("torch")
for _name, _size in (
    ("bfloat16", 2),
    ("float16", 2),
    ("half", 2),
    ("float32", 4),
    ("float", 4),
    ("uint8", 1),
    ("int8", 1),
    ("float8_e4m3fn", 1),
    ("float8_e5m2", 1),
):
    setattr(
        TORCH,
        _name,
        Dtype(
            _name
            if _name not in ("half", "float")
            else {"half": "float16", "float": "float32"}[_name],
            _size,
        ),
    )
TORCH.dtype = Dtype  # type: ignore[attr-defined]
# vllm/utils/torch_utils.py (vllm/utils/__init__.py early) STR_DTYPE_TO_TORCH_DTYPE, fp8 as uint8.
STR_DTYPE_TO_TORCH_DTYPE = {
    "bfloat16": TORCH.bfloat16,
    "half": TORCH.float16,
    "float16": TORCH.float16,
    "float32": TORCH.float32,
    "float": TORCH.float32,
    "fp8": TORCH.uint8,
    "fp8_e4m3": TORCH.uint8,
    "fp8_e5m2": TORCH.uint8,
}


class Log:
    """``vllm.logger`` as the sizing code calls it; keeps the formatted lines."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def _keep(self, message: str, *args: Any, **_: Any) -> None:
        self.lines.append(message % args if args else message)

    info = info_once = warning = warning_once = _keep

    def debug(self, *_: Any, **__: Any) -> None:
        pass

    debug_once = debug


def cdiv(a: int, b: int) -> int:
    return -(a // -b)


def divide(numerator: int, denominator: int) -> int:
    # vllm/distributed/utils.py divide / ensure_divisibility
    assert numerator % denominator == 0, f"{numerator} is not divisible by {denominator}"
    return numerator // denominator


def get_kv_cache_torch_dtype(cache_dtype: str, model_dtype: Any = None) -> Any:
    """vllm/utils/torch_utils.py get_kv_cache_torch_dtype for the dtypes modelled here."""
    if cache_dtype == "auto":
        return (
            STR_DTYPE_TO_TORCH_DTYPE[model_dtype] if isinstance(model_dtype, str) else model_dtype
        )
    return STR_DTYPE_TO_TORCH_DTYPE[cache_dtype]


class MultipleOf:
    """vllm/v1/attention/backend.py MultipleOf (a dataclass holding ``base``)."""

    def __init__(self, base: int) -> None:
        self.base = base


class ReleaseCode:
    """A namespace holding definitions of ``tree``'s release, executed from its source."""

    def __init__(self, tree: ReleaseTree) -> None:
        self.tree = tree
        self.log = Log()
        self.failed: list[tuple[str, str]] = []
        name = f"vllm_release_{tree.version.replace('.', '_')}"
        self.module = types.ModuleType(name)
        sys.modules[name] = self.module
        self.ns: dict[str, Any] = self.module.__dict__
        self.ns.update(_base_names(self.log))
        self._bare_modules()

    def _bare_modules(self) -> None:
        """The modules the release's functions import inside their bodies, holding what this
        namespace holds (a function-local ``from vllm.X import Y`` then finds the release's
        own ``Y``)."""
        ns = self.ns
        code = self

        class _Lazy(types.ModuleType):
            # A package, so that ``from vllm.v1.core.kv_cache_config_builder import ...``
            # (vllm-0.33.0:vllm/v1/core/kv_cache_planning.py:1612) finds its submodule.
            __path__: typing.ClassVar[list[str]] = []

            def __getattr__(self, attribute: str) -> Any:
                if attribute.startswith("__"):
                    raise AttributeError(f"{self.__name__}.{attribute}")
                if attribute not in ns:
                    code.from_tree(self.__name__, attribute)
                if attribute in ns:
                    return ns[attribute]
                raise AttributeError(f"{self.__name__}.{attribute}")

        _FINDER.code, _FINDER.lazy = self, _Lazy
        if _FINDER not in sys.meta_path:
            sys.meta_path.insert(0, _FINDER)

        for module in (
            "vllm", "vllm.config", "vllm.config.cache", "vllm.config.vllm", "vllm.config.model",
            "vllm.model_executor", "vllm.model_executor.models",
            "vllm.model_executor.models.config", "vllm.model_executor.layers",
            "vllm.model_executor.layers.mamba", "vllm.model_executor.layers.mamba.abstract",
            "vllm.model_executor.layers.mamba.mamba_utils", "vllm.utils",
            "vllm.utils.math_utils", "vllm.utils.torch_utils", "vllm.v1",
            "vllm.v1.attention", "vllm.v1.attention.backend", "vllm.v1.attention.backends",
            "vllm.v1.attention.backends.gdn_attn", "vllm.v1.attention.backends.registry",
            "vllm.v1.kv_cache_interface", "vllm.v1.core", "vllm.v1.core.kv_cache_utils",
            "vllm.v1.core.kv_cache_planning", "vllm.platforms", "vllm.envs",
            "vllm.v1.kv_cache_spec_registry", "vllm.model_executor.layers.attention_layer_base",
            "vllm.v1.core.single_type_kv_cache_manager",
        ):  # fmt: skip
            sys.modules[module] = _Lazy(module)

    def module_file(self, module: str) -> str | None:
        """The file of the release's tree that holds ``module`` (``vllm.a.b``)."""
        base = module.replace(".", "/")
        for candidate in (f"{base}.py", f"{base}/__init__.py"):
            if self.tree.has(candidate):
                return candidate
        return None

    def from_tree(self, module: str, name: str) -> None:
        """Load ``name`` of ``module`` from the release's own file for it (the file that
        defines it, or the one that file imports it from), when a function imports it."""
        relative = self.module_file(module)
        for _ in range(4):
            if relative is None:
                return
            if self.tree.line_of(relative, name) is not None:
                self.load(relative, [name])
                self.follow_imports(relative, [name])
                if name not in self.ns:
                    # Its bases or decorators were imported names: loaded now, try again.
                    self.load(relative, [name])
                return
            relative = self.tree.import_source(relative, name)

    def follow_imports(self, relative: str, names: Iterable[str] | None = None) -> None:
        """The functions and classes ``relative``'s definitions (all, or ``names``) read that
        it imports from another module of the release, loaded from the file that import names
        in this release's tree, or from Python's standard library (``from functools import
        reduce``, vllm-0.31.0:vllm/v1/core/kv_cache_utils.py:12); a name already held here (a
        stand-in, or an earlier definition) is left as it is. Followed through the loaded
        definitions' own modules, a few levels deep."""
        pending: list[tuple[str, set[str] | None]] = [
            (relative, set(names) if names is not None else None)
        ]
        for _ in range(5):
            found: list[tuple[str, str]] = []
            for file, only in pending:
                for name in sorted(_read_names(self.tree, file, only)):
                    if name in self.ns or name in dir(builtins):
                        continue
                    standard = _stdlib_import(self.tree, file, name)
                    if standard is not None:
                        self.ns[name] = standard
                        continue
                    source = self.tree.import_source(file, name)
                    if source is not None and self.tree.line_of(source, name) is not None:
                        found.append((source, name))
            if not found:
                return
            pending = []
            for source, name in dict.fromkeys(found):
                if name not in self.ns and self.load(source, [name]):
                    pending.append((source, {name}))

    def load(self, relative: str, names: Iterable[str] | None = None) -> list[str]:
        """Execute the top-level classes, functions and simple assignments of ``relative``
        (all, or ``names``); a definition whose base or decorator is not here is skipped and
        listed in ``failed``. Returns the names defined."""
        if not self.tree.has(relative):
            return []
        wanted = set(names) if names is not None else None
        done: list[str] = []
        for node in ast.parse(self.tree.path(relative).read_text(encoding="utf-8")).body:
            defined = _defined(node)
            if not defined or (wanted is not None and not (defined & wanted)):
                continue
            try:
                self._run(node, relative)
                done.extend(defined)
            except Exception as error:
                self.failed.append((f"{relative}:{node.lineno}", repr(error)))
        return done

    def class_with(
        self,
        relative: str,
        cls: str,
        methods: Iterable[str],
        as_name: str,
        bases: Iterable[str] = (),
    ) -> Any:
        """A class named ``as_name`` made of ``methods`` of ``cls`` in ``relative`` (no bases
        but ``bases``, names held here; the methods keep their decorators), executed in this
        namespace."""
        node = self.tree.class_node(relative, cls)
        if node is None:
            raise LookupError(f"{self.tree.cite(relative)}: no class {cls}")
        wanted = set(methods)
        body: list[ast.stmt] = [
            item for item in node.body if isinstance(item, ast.FunctionDef) and item.name in wanted
        ]
        made = ast.ClassDef(
            name=as_name,
            bases=[ast.Name(id=base, ctx=ast.Load()) for base in bases],
            keywords=[],
            body=body or [ast.Pass()],
            decorator_list=[],
        )
        self._run(made, relative)
        return self.ns[as_name]

    def _run(self, node: ast.stmt, relative: str) -> None:
        module = ast.fix_missing_locations(ast.Module(body=[node], type_ignores=[]))
        code = compile(
            module,
            f"vllm-{self.tree.version}:{relative}",
            "exec",
            flags=future_flags.annotations.compiler_flag,
            dont_inherit=True,
        )
        exec(code, self.ns)


def _stdlib_import(tree: ReleaseTree, relative: str, name: str) -> Any:
    """What ``name`` is, where ``relative`` imports it at its top from Python's standard
    library (``from functools import reduce``, ``import importlib``); else None."""
    for node in tree._tree(relative).body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.split(".")[0]
                if top in sys.stdlib_module_names and (alias.asname or top) == name:
                    return importlib.import_module(alias.name if alias.asname else top)
            continue
        if not isinstance(node, ast.ImportFrom) or node.level or node.module is None:
            continue
        if node.module.split(".")[0] not in sys.stdlib_module_names:
            continue
        for alias in node.names:
            if (alias.asname or alias.name) == name:
                return getattr(importlib.import_module(node.module), alias.name, None)
    return None


def _read_names(tree: ReleaseTree, relative: str, only: set[str] | None = None) -> set[str]:
    """The bare names the top-level functions and classes of ``relative`` (all, or
    ``only``) read."""
    return {
        n.id
        for node in tree._tree(relative).body
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and (only is None or node.name in only)
        for n in ast.walk(node)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    }


class _TreeFinder:
    """Finds a ``vllm.*`` module a function imports in its body, where the release's tree
    has its file, as a module whose names come from that file (``ReleaseCode.from_tree``)."""

    code: ReleaseCode | None = None
    lazy: Any = None

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if self.code is None or not fullname.startswith("vllm."):
            return None
        if self.code.module_file(fullname) is None:
            return None
        return importlib.util.spec_from_loader(fullname, self, is_package=True)

    def create_module(self, spec: Any) -> Any:
        return self.lazy(spec.name)

    def exec_module(self, module: Any) -> None:
        return None


_FINDER = _TreeFinder()


def _defined(node: ast.stmt) -> set[str]:
    if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
        return {node.name}
    if isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) for t in node.targets):
        return {t.id for t in node.targets if isinstance(t, ast.Name)}
    if (
        isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Tuple)
        and all(isinstance(e, ast.Name) for e in node.targets[0].elts)
    ):
        # ``_DIM_L, _DIM_B, ... = 0, 1, ...`` (vllm-0.29.0:vllm/v1/kv_cache_layout.py:12)
        return {e.id for e in node.targets[0].elts if isinstance(e, ast.Name)}
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value:
        return {node.target.id}
    return set()


def _base_names(log: Log) -> dict[str, Any]:
    """What the release's modules import at their top, as the sizing code uses it."""
    return {
        "torch": TORCH,
        "Any": Any,
        "ClassVar": typing.ClassVar,
        "Literal": typing.Literal,
        "Optional": typing.Optional,
        "Union": typing.Union,
        "Callable": typing.Callable,
        "Iterable": typing.Iterable,
        "Sequence": typing.Sequence,
        "Self": typing.Any,
        "TypeAlias": typing.Any,
        "TYPE_CHECKING": False,
        "cast": lambda _type, value: value,
        "overload": lambda function: function,
        "override": lambda function: function,
        "abstractmethod": lambda function: function,
        "ABC": object,
        "dataclass": dataclasses.dataclass,
        "field": dataclasses.field,
        "fields": dataclasses.fields,
        "replace": dataclasses.replace,
        "astuple": dataclasses.astuple,
        "asdict": dataclasses.asdict,
        "copy": copy,
        "deepcopy": copy.deepcopy,
        "math": math,
        "prod": math.prod,
        "lcm": math.lcm,
        "gcd": math.gcd,
        "functools": functools,
        "partial": functools.partial,
        "cached_property": functools.cached_property,
        "cache": functools.cache,
        "lru_cache": functools.lru_cache,
        "defaultdict": collections.defaultdict,
        "Counter": collections.Counter,
        "Enum": enum.Enum,
        "IntEnum": enum.IntEnum,
        "contextlib": contextlib,
        "logger": log,
        "GiB_bytes": GIB,
        "cdiv": cdiv,
        "round_up": lambda x, y: cdiv(x, y) * y,
        "divide": divide,
        "ensure_divisibility": divide,
        "get_dtype_size": lambda dtype: dtype.itemsize,
        "get_kv_cache_torch_dtype": get_kv_cache_torch_dtype,
        "STR_DTYPE_TO_TORCH_DTYPE": STR_DTYPE_TO_TORCH_DTYPE,
        "MultipleOf": MultipleOf,
        "get_kv_cache_dtype_handler": lambda name: None,
        # No layer is built, so no attention layer is an instance of the base class.
        "AttentionLayerBase": type("AttentionLayerBase", (), {}),
        # vllm/envs.py VLLM_SSM_CONV_STATE_LAYOUT unset: "SD" (conv state dim last).
        "get_conv_state_layout": lambda: "SD",
        "is_conv_state_dim_first": lambda: False,
        "format_gib": lambda size: f"{round(size / GIB, 2)}",
    }
