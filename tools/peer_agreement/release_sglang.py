"""One SGLang release's own mamba-pool code, run from that release's extracted tree.

``ReleaseSglang(version).case(...)`` runs, from ``/work/peer_cache/sglang-<version>/``
(``$PEER_AGREEMENT_RELEASES``), the release's own definitions of:

* the pool size ``K``: ``handle_max_mamba_cache`` (``model_executor/model_runner.py``
  0.5.3.post2 to 0.5.6.post2, ``model_executor/model_runner_kv_cache_mixin.py`` 0.5.7 to
  0.5.15.post1) or ``_handle_max_mamba_cache`` (``mem_cache/kv_cache_configurator.py`` from
  0.5.16); before 0.5.3.post2 (0.5.2 to 0.5.3.post1), which have no such function, the
  statements of ``ModelRunner.initialize`` that set ``server_args.max_mamba_cache_size``
  (found by that assignment) followed by the ``if ...: rest_memory -= K * mamba_cache_per_req
  / 2**30`` statement of ``ModelRunner.profile_max_num_token`` (``_early_pool``), with the
  hybrid predicates they test (``is_hybrid_gdn``; 0.5.3.post1 ``mambaish_config`` /
  ``hybrid_gdn_config`` / ``mamba2_config``, whose ``isinstance`` tests meet stand-ins for the
  release's own ``configs/*.py`` classes, the fixture's ``hf_config`` being the one whose
  ``model_type`` is the fixture's) run from the release's own ``ModelRunner``; where the
  predicate of the first such statement is false the release builds no mamba pool for the
  model, which is reported as a refusal (``NotHybrid``);
* the ratio: ``_calculate_mamba_ratio`` (from 0.5.10); before, the ratio statements of the
  release's ``init_memory_pool``, run as far as the cap on ``max_num_reqs`` (the body is cut
  before the first statement that builds a pool; the hybrid-SWA token split, an ``if`` on
  ``is_hybrid``, is skipped, the "Not enough memory" check on the tokens is kept); before
  0.5.3.post2 the release has no ratio (its ``init_memory_pool`` caps ``max_num_reqs`` at K
  itself, one mamba slot a request), reported as 1 (mirrored);
* the running cap: ``_resolve_max_num_reqs`` / ``resolve_max_num_reqs`` (from 0.5.10, after
  ``_apply_token_constraints`` where the release has it); before, the truncated
  ``init_memory_pool`` and the release's own ``self.max_running_requests = min(...)``
  expression (``managers/tp_worker.py`` up to 0.5.6.post2, ``model_executor/model_runner.py``
  0.5.7 to 0.5.9), with ``req_to_token_pool.size`` the ``max_num_reqs`` the pool is built with;
* the mamba pool's request slots (before 0.5.10): the argument of the release's
  ``HybridReqToTokenPool(...)`` call in ``init_memory_pool`` that its
  ``HybridReqToTokenPool.__init__`` (``mem_cache/memory_pool.py``) hands to ``MambaPool`` as
  ``size`` (``_mamba_pool_size``): ``size=max_num_reqs`` up to 0.5.3.post1, ``mamba_size=
  server_args.max_mamba_cache_size`` (K) from 0.5.3.post2.

Each definition is found by name in the release's own files (``locate``), never at a path
another release uses, and compiled from its own AST (tracebacks carry the release's line
numbers). Module constants (``MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO``, ...) are the
literal top-level assignments of the defining file; ``get_mamba_tracking_slots`` and the
``ServerArgs.enable_mamba_extra_buffer*`` methods are run from the release where it has them.

Stubbed / fed in (see ``FED``): the per-request state bytes ``p`` and the layer count are the
release's own (``release_state.py``: R's config class for the fixture, R's ``mambaish_config``
/ ``is_hybrid_gdn`` and ``mamba2_cache_params.mamba_cache_per_req``, under the transformers R
pins; ``release_sglang_grid.own_states``), compared with the package's ``ssm_state(config,
layout="sglang", version=R, tp_size=tp)`` apart; the KV bytes per token is the release's own
(``release_cell.py``), but the package's (``kv_bytes_per_token``) in speculative cases from
0.5.14; the strategy resolution
(radix cache on/off, strategy, overlap scheduler) is the package's, fed in as the server
arguments the release's functions read; the tokens are ``int(rest * 2**30) // cell`` of what
the release's pool function leaves (mirrored from ``profile_max_num_token`` /
``DefaultPoolConfigurator.calculate_pool_sizes``), then page-aligned; the pool bytes are
``(size + 1) * p`` (``MambaPool`` allocates ``size + 1``, mirrored), ``size`` the release's own
argument above before 0.5.10 and ``K`` (mirrored) from 0.5.10. Defaults the releases' functions
read and the launch does not give are read from the release's own tree, with their file:line
(``defaults``).
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import copy
import functools
import logging
import math
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from .release_tree import releases_root

__all__ = ["FED", "ReleaseSglang", "locate"]

FED = (
    "per-request state bytes p and the state-layer count: the release's own (release_state.py: "
    "R's config class built from the fixture under the transformers R pins, R's "
    "mambaish_config / is_hybrid_gdn, mamba2_cache_params.mamba_cache_per_req and its layers; "
    "torch, the tensor-parallel getters (tp, one attention-DP shard) and envs stood in for), "
    "compared with the package's ssm_state apart",
    "KV bytes per token: the release's own (release_cell.py: R's profile_max_num_token / "
    "get_cell_size_per_token or DefaultPoolConfigurator's _compute_cell_size on R's "
    "ModelConfig), compared with the package's kv_bytes_per_token; the package's in "
    "speculative cases from 0.5.14 (R's EAGLE draft layers are not run)",
    "strategy resolution (radix cache on/off, strategy, overlap scheduler): the package's "
    "answer, fed in as the server arguments the release's functions read",
    "tokens = int(rest_after_pool * 2**30) // cell, page-aligned (mirrored); "
    "pool bytes = (size + 1) * p (MambaPool's + 1 mirrored; size = the release's own "
    "HybridReqToTokenPool argument before 0.5.10: max_num_reqs to 0.5.3.post1, K after; "
    "K from 0.5.10, mirrored)",
    "before 0.5.3.post2 (no ratio in the release: init_memory_pool caps max_num_reqs at K, "
    "one mamba slot a request) the ratio is reported as 1 (mirrored)",
    "0.5.2 to 0.5.3.post1: hf_config is a stand-in of the release's config class whose "
    "model_type is the fixture's (for the release's isinstance predicates), carrying the "
    "release's own per-request bytes as mamba_cache_per_req / mamba2_cache_params",
    "one attention-DP shard, no pipeline parallelism, no PD role, ReplaySSM off, no fused "
    "draft state, SGLANG_* environment unset (defaults read from the release's environ.py)",
)

# Where a release may keep the pool code, oldest layout first; a definition is taken from the
# first of these files of the release's own tree that defines it.
POOL_FILES = (
    "sglang/srt/mem_cache/kv_cache_configurator.py",
    "sglang/srt/model_executor/model_runner_kv_cache_mixin.py",
    "sglang/srt/model_executor/model_runner.py",
)
HELPERS = (
    ("get_mamba_tracking_slots", ("sglang/srt/mem_cache/allocation_sizing.py",)),
    ("mamba_extra_buffer_of", ("sglang/srt/arg_groups/model_override_base.py",
                               "sglang/srt/arg_groups/overrides.py")),
    ("mamba_extra_buffer_lazy_of", ("sglang/srt/arg_groups/model_override_base.py",
                                    "sglang/srt/arg_groups/overrides.py")),
    ("mamba_extra_buffer_enabled", ("sglang/srt/runtime_context.py",)),
    ("mamba_extra_buffer_lazy_enabled", ("sglang/srt/runtime_context.py",)),
)  # fmt: skip
# Globals the releases' code may touch that the sizing does not read (a ``_Loose`` stands in);
# any other global a run touches is an oracle gap, never a silent default.
LOOSE_GLOBALS = frozenset(
    {"torch", "SGLANG_CI_SMALL_KV_SIZE", "get_world_group", "ModelRunner", "ServerArgs",
     "MemoryPoolConfig", "get_available_gpu_memory"}
)  # fmt: skip
CAP_FILES = ("sglang/srt/model_executor/model_runner.py", "sglang/srt/managers/tp_worker.py")


def _tree_root(version: str) -> Path:
    return releases_root() / f"sglang-{version}"


@functools.cache
def _parse(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def locate(
    root: Path, names: Sequence[str], files: Sequence[str] = POOL_FILES, cls: str | None = None
) -> tuple[str, str | None, ast.FunctionDef] | None:
    """The first of ``names`` defined (as a method of any class, or of class ``cls``, or at top
    level) in the first of ``files`` of the release tree at ``root`` that defines it: (relative
    path, class name, node)."""
    for name in names:
        for relative in files:
            path = root / relative
            if not path.exists():
                continue
            module = _parse(path)
            for node in module.body:
                if isinstance(node, ast.FunctionDef) and node.name == name and cls is None:
                    return relative, None, node
                if isinstance(node, ast.ClassDef) and cls in (None, node.name):
                    for item in node.body:
                        if isinstance(item, ast.FunctionDef) and item.name == name:
                            return relative, node.name, item
    return None


def _literal_constants(path: Path) -> dict[str, Any]:
    """The top-level ``NAME = literal`` assignments of ``path``."""
    out: dict[str, Any] = {}
    for node in _parse(path).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name):
                with contextlib.suppress(ValueError, TypeError, SyntaxError):
                    out[target.id] = _constant(node.value)
    return out


def _constant(node: ast.expr) -> Any:
    """A literal, or ``frozenset``/``set`` of one (the architecture lists)."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("frozenset", "set")
        and len(node.args) == 1
        and not node.keywords
    ):
        return frozenset(ast.literal_eval(node.args[0]))
    return ast.literal_eval(node)


class _Loose:
    """A stand-in for anything the release's code touches that the sizing does not depend on
    (torch, loggers, pools); it records the names it was asked for."""

    def __init__(self, name: str, touched: set[str]) -> None:
        self._name, self._touched = name, touched

    def __getattr__(self, name: str) -> _Loose:
        full = f"{self._name}.{name}"
        self._touched.add(full)
        return _Loose(full, self._touched)

    def __call__(self, *args: Any, **kwargs: Any) -> _Loose:
        return _Loose(f"{self._name}()", self._touched)

    def __bool__(self) -> bool:
        return False


class _Namespace(dict):  # type: ignore[type-arg]
    """Globals of a compiled definition: the release's constants and the stand-ins first, then
    builtins, then a recorded ``_Loose``."""

    def __init__(self, values: Mapping[str, Any], touched: set[str]) -> None:
        super().__init__(values)
        self.touched = touched

    def __missing__(self, key: str) -> Any:
        if hasattr(builtins, key):
            return getattr(builtins, key)
        self.touched.add(key)
        return _Loose(key, self.touched)


class _Bag:
    """Server arguments / config views: plain attributes; an unknown one is recorded and is a
    ``_Loose``."""

    def __init__(self, touched: set[str], label: str, **values: Any) -> None:
        object.__setattr__(self, "_touched", touched)
        object.__setattr__(self, "_label", label)
        for key, value in values.items():
            object.__setattr__(self, key, value)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        full = f"{self._label}.{name}"
        self._touched.add(full)
        return _Loose(full, self._touched)


class _SpecAlgorithm:
    """``SpeculativeAlgorithm``: EAGLE (topk 1) when draft tokens are given, else NONE."""

    def __init__(self, draft: int) -> None:
        self.draft = draft

    def is_none(self) -> bool:
        return not self.draft

    def is_eagle(self) -> bool:
        return bool(self.draft)

    def __getattr__(self, name: str) -> Callable[[], bool]:
        if name.startswith("__"):
            raise AttributeError(name)
        return lambda: False


class _Envs:
    """``envs.NAME.get()``: the default the release's environ.py declares."""

    def __init__(self, defaults: Mapping[str, Any], touched: set[str]) -> None:
        self._defaults, self._touched = defaults, touched

    def __getattr__(self, name: str) -> Any:
        self._touched.add(f"envs.{name}")
        value = self._defaults.get(name)
        return _Bag(self._touched, f"envs.{name}", get=lambda: value, value=value)


def _env_defaults(root: Path) -> tuple[dict[str, Any], dict[str, str]]:
    """``NAME = EnvX(default)`` declarations of the release's ``sglang/srt/environ.py``."""
    path = root / "sglang/srt/environ.py"
    values: dict[str, Any] = {}
    where: dict[str, str] = {}
    if not path.exists():
        return values, where
    for node in ast.walk(_parse(path)):
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                target = value = None
                if isinstance(item, ast.Assign) and len(item.targets) == 1:
                    target, value = item.targets[0], item.value
                elif isinstance(item, ast.AnnAssign):
                    target, value = item.target, item.value
                if isinstance(target, ast.Name) and isinstance(value, ast.Call) and value.args:
                    try:
                        values[target.id] = ast.literal_eval(value.args[0])
                    except (ValueError, TypeError, SyntaxError):
                        continue
                    where[target.id] = f"sglang/srt/environ.py:{item.lineno}"
    return values, where


def _field_default(root: Path, name: str) -> tuple[Any, str] | None:
    """The default of server argument ``name`` in the release's own tree: the ``ServerArgs``
    field (``server_args.py``), or from 0.5.19 the field of ``arg_groups/fields/*.py`` (its
    ``fallback=`` where the field is resolvable)."""
    files = [root / "sglang/srt/server_args.py"]
    files += sorted((root / "sglang/srt/arg_groups/fields").glob("*.py"))
    for path in files:
        if not path.exists():
            continue
        for node in ast.walk(_parse(path)):
            if not isinstance(node, ast.ClassDef):
                continue
            for item in node.body:
                if not (
                    isinstance(item, ast.AnnAssign)
                    and isinstance(item.target, ast.Name)
                    and item.target.id == name
                ):
                    continue
                where = f"{path.relative_to(root)}:{item.lineno}"
                for sub in ast.walk(item.annotation):
                    if isinstance(sub, ast.keyword) and sub.arg == "fallback":
                        return ast.literal_eval(sub.value), where + " (fallback)"
                if item.value is None:
                    continue
                try:
                    return ast.literal_eval(item.value), where
                except (ValueError, TypeError, SyntaxError):
                    continue
    return None


def _field_where(root: Path, name: str) -> str | None:
    """Where R declares server argument ``name`` (a ``ServerArgs`` field of ``server_args.py``
    or, from 0.5.19, of ``arg_groups/fields/*.py``); ``None`` where R has no such argument."""
    files = [root / "sglang/srt/server_args.py"]
    files += sorted((root / "sglang/srt/arg_groups/fields").glob("*.py"))
    for path in files:
        if not path.exists():
            continue
        for node in ast.walk(_parse(path)):
            if isinstance(node, ast.ClassDef):
                for item in node.body:
                    if (
                        isinstance(item, ast.AnnAssign)
                        and isinstance(item.target, ast.Name)
                        and item.target.id == name
                    ):
                        return f"{path.relative_to(root)}:{item.lineno}"
    return None


# The launch flags by the package's argument name, and the names R's ServerArgs has had for each
# (--mamba-scheduler-strategy, 0.5.9-0.5.13, is --mamba-radix-cache-strategy from 0.5.14).
FLAG_NAMES = {"mamba_radix_cache_strategy": ("mamba_radix_cache_strategy",
                                             "mamba_scheduler_strategy")}  # fmt: skip


def _speculative_running_default(root: Path) -> tuple[int, str] | None:
    """Where the release sets ``max_running_requests = 48`` for EAGLE (``server_args.py``, from
    0.5.14 ``arg_groups/speculative_hook.py``)."""
    for relative in ("sglang/srt/arg_groups/speculative_hook.py", "sglang/srt/server_args.py"):
        path = root / relative
        if not path.exists():
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            match = re.search(r"max_running_requests = (\d+)$", line.strip())
            if match:
                return int(match.group(1)), f"{relative}:{number}"
    return None


def _config_classes(root: Path) -> dict[str, type]:
    """Stand-ins for R's own config classes (``sglang/srt/configs/*.py`` classes with a literal
    ``model_type``), for the ``isinstance`` tests of R's ``ModelRunner`` properties (0.5.3.post1:
    ``hybrid_gdn_config`` / ``mamba2_config``). Each carries its ``model_type``; a fixture's
    ``hf_config`` is an instance of the class whose ``model_type`` is the fixture's."""
    out: dict[str, type] = {}
    for path in sorted((root / "sglang/srt/configs").glob("*.py")):
        for node in _parse(path).body:
            if not isinstance(node, ast.ClassDef):
                continue
            for item in node.body:
                if (
                    isinstance(item, ast.Assign)
                    and len(item.targets) == 1
                    and isinstance(item.targets[0], ast.Name)
                    and item.targets[0].id == "model_type"
                    and isinstance(item.value, ast.Constant)
                    and isinstance(item.value.value, str)
                ):
                    where = f"{path.relative_to(root)}:{item.lineno}"
                    out.setdefault(
                        node.name,
                        type(node.name, (_Bag,), {"model_type": item.value.value,
                                                  "where": where}),
                    )  # fmt: skip
    return out


def _size_of(call: ast.Call) -> ast.expr | None:
    """The ``size`` argument of a call (keyword, else first positional)."""
    size = next((k.value for k in call.keywords if k.arg == "size"), None)
    return size if size is not None or not call.args else call.args[0]


def _mamba_size_argument(
    function: ast.FunctionDef, methods: Mapping[str, ast.FunctionDef], depth: int = 0
) -> tuple[ast.expr, int] | None:
    """What ``function`` passes to ``MambaPool`` as ``size``, in terms of its own parameters,
    directly or through a ``self.method(size=...)`` of the same class (0.5.4 on:
    ``HybridReqToTokenPool._init_mamba_pool``), with the line of the ``MambaPool`` call."""
    for node in ast.walk(function):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "MambaPool"
        ):
            size = _size_of(node)
            return (size, node.lineno) if size is not None else None
    if depth > 2:
        return None
    for node in ast.walk(function):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "self"
            and node.func.attr in methods
        ):
            method = methods[node.func.attr]
            inner = _mamba_size_argument(method, methods, depth + 1)
            if inner is None or not isinstance(inner[0], ast.Name):
                continue
            names = [a.arg for a in (*method.args.posonlyargs, *method.args.args)][1:]
            passed = next((k.value for k in node.keywords if k.arg == inner[0].id), None)
            if passed is None and inner[0].id in names:
                index = names.index(inner[0].id)
                passed = node.args[index] if index < len(node.args) else None
            if passed is not None:
                return passed, inner[1]
    return None


# ModelRunner properties that say whether R builds a mamba pool for a model (0.5.2 to
# 0.5.3.post1 run them from R's own file).
PREDICATES = ("is_hybrid_gdn", "hybrid_gdn_config", "mamba2_config", "mambaish_config")


@contextlib.contextmanager
def _registry_stub() -> Any:
    """``sglang.srt.configs.linear_attn_model_registry`` with nothing registered: the
    resolution imports it inside the function. The releases register no fixture architecture
    there (the in-tree registrations are GigaChat35's, configs/gigachat35.py, from 0.5.21)."""
    import sys
    import types

    names = ("sglang", "sglang.srt", "sglang.srt.configs",
             "sglang.srt.configs.linear_attn_model_registry")  # fmt: skip
    saved = {name: sys.modules.get(name) for name in names}
    for name in names:
        module = types.ModuleType(name)
        module.__path__ = []  # type: ignore[attr-defined]
        sys.modules[name] = module
    registry = sys.modules[names[-1]]
    registry.get_linear_attn_spec_by_arch = lambda arch: None  # type: ignore[attr-defined]
    registry.get_linear_attn_spec = lambda hf_config: None  # type: ignore[attr-defined]
    try:
        yield
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module


def _quiet_logger(version: str) -> logging.Logger:
    logger = logging.getLogger(f"peer_agreement.sglang-{version}")
    logger.setLevel(logging.ERROR)
    logger.propagate = False
    return logger


class ReleaseSglang:
    """Release ``version``'s pool, ratio and running-cap definitions, located and compiled."""

    def __init__(self, version: str) -> None:
        self.version = version
        self.root = root = _tree_root(version)
        if not (root / "sglang").is_dir():
            raise FileNotFoundError(f"no extracted tree at {root}")
        self.touched: set[str] = set()
        self.where: dict[str, str] = {}
        pool = locate(root, ("_handle_max_mamba_cache", "handle_max_mamba_cache"))
        # Before 0.5.3.post2 there is no pool-size function: K is set by statements of
        # ModelRunner.initialize and subtracted in profile_max_num_token (``_early_pool``).
        self.early = pool is None
        if pool is None:
            initialize = locate(root, ("initialize",), POOL_FILES, cls="ModelRunner")
            if initialize is None:
                raise LookupError(
                    f"sglang {version}: no handle_max_mamba_cache, no ModelRunner.initialize"
                )
            pool_file = initialize[0]
        else:
            pool_file = pool[0]
        self.pool_file = pool_file
        self.constants = _literal_constants(root / pool_file)
        self.config_classes = _config_classes(root)
        env_values, self.env_where = _env_defaults(root)
        self.envs = _Envs(env_values, self.touched)
        self.helpers: dict[str, Any] = {}
        # Module-level helpers the releases' functions call, run from the release's own file.
        for name, files in HELPERS:
            found = locate(root, (name,), files)
            if found is not None and found[1] is None:
                self.helpers[name] = self._compile(found, name)
        self.predicates: dict[str, Any] = {}
        self.hybrid_test: tuple[ast.expr, str, str] | None = None
        if pool is None:
            self.pool_fn = self._early_pool(pool_file)
        else:
            self.pool_fn = self._compile(pool, "pool")
        ratio = locate(root, ("_calculate_mamba_ratio",), (pool_file,))
        self.ratio_fn = self._compile(ratio, "ratio") if ratio else None
        cap = locate(root, ("resolve_max_num_reqs", "_resolve_max_num_reqs"), (pool_file,))
        self.cap_fn = self._compile(cap, "cap") if cap else None
        constraints = locate(root, ("_apply_token_constraints",), (pool_file,))
        self.constraints_fn = self._compile(constraints, "constraints") if constraints else None
        # The checks that refuse a budget the pool leaves empty: MemoryPoolConfig.__post_init__
        # (no KV token; from 0.5.10) and _profile_available_bytes' "rest_memory <= 0" after the
        # pool (from 0.5.14).
        post_init = locate(
            root,
            ("__post_init__",),
            (pool_file, "sglang/srt/model_executor/pool_configurator.py"),
            cls="MemoryPoolConfig",
        )
        self.post_init_fn = self._compile(post_init, "tokens_check") if post_init else None
        self.rest_check_fn = self._rest_check(pool_file)
        self.init_fn = None
        self.final_cap: tuple[ast.expr, str] | None = None
        self.mamba_size: tuple[ast.expr, str] | None = None
        if self.cap_fn is None:
            init = locate(root, ("init_memory_pool",), (pool_file, *POOL_FILES))
            if init is None:
                raise LookupError(f"sglang {version}: no init_memory_pool")
            self.init_fn = self._compile(init, "init_memory_pool", truncate=True)
            self.final_cap = self._final_cap_expression()
            self.mamba_size = self._mamba_pool_size(init)
        self.resolution_fn = self._resolution()
        self.server_methods: dict[str, Any] = {}
        for name in ("enable_mamba_extra_buffer", "enable_mamba_extra_buffer_lazy"):
            found = locate(root, (name,), ("sglang/srt/server_args.py",))
            if found is not None and found[1] == "ServerArgs":
                self.server_methods[name] = self._compile(found, f"ServerArgs.{name}")
        self.defaults = self._defaults()

    # -- compiling -------------------------------------------------------------------------

    def _globals(self) -> _Namespace:
        values: dict[str, Any] = {
            **self.constants,
            "logging": logging,
            "math": math,
            "logger": _quiet_logger(self.version),
            "envs": self.envs,
            "get_schedule": lambda: self._current["schedule"],
            "get_memory": lambda: self._current["schedule"],
            "get_spec": lambda: self._current["schedule"],
            "get_exec": lambda: self._current["exec"],
            "get_parallel": lambda: self._current["parallel"],
            "get_context": lambda: self._current["context"],
            "_pd_prefill_skips_mamba_spec_state": lambda: False,
            # one pipeline stage (sglang-0.5.18:sglang/srt/runtime_context.py configured_pp_size)
            "configured_pp_size": lambda: 1,
            # the view's model config (model_override_base.model_config_of builds it)
            "model_config_of": lambda view: view.get_model_config(),
            # a CUDA (sm90) platform, not XPU/NPU/HIP
            "get_platform": lambda: _Bag(
                self.touched, "platform", is_xpu=False, is_npu=False, is_hip=False, is_cuda=True
            ),
            "is_xpu": lambda: False,
            "is_npu": lambda: False,
            "is_hip": lambda: False,
            # ServerArgs' view over the resolved arguments: the arguments themselves here
            "resolving_view": lambda args: args,
            "log_info_on_rank0": lambda *a, **k: None,
            **self.helpers,
            **getattr(self, "config_classes", {}),
        }
        return _Namespace(values, self.touched)

    # The current case's argument views, which the stand-in getters answer with.
    _current: ClassVar[dict[str, Any]] = {}

    def _compile(
        self, found: tuple[str, str | None, ast.FunctionDef], role: str, truncate: bool = False
    ) -> Any:
        relative, cls, node = found
        node = copy.deepcopy(node)
        node.decorator_list = []
        end = node.end_lineno
        if truncate:
            node.body, end = self._truncated(node, relative)
        self.where[role] = (
            f"sglang-{self.version}:{relative}:{node.lineno}-{end}"
            + (f" ({cls}.{node.name})" if cls else f" ({node.name})")
            + (" cut before the pools" if truncate else "")
        )
        module = ast.Module(body=[node], type_ignores=[])
        code = compile(module, str(self.root / relative), "exec")
        namespace = self._globals()
        exec(code, namespace)
        return namespace[node.name]

    def _early_pool(self, relative: str) -> Any:
        """Before ``handle_max_mamba_cache`` (0.5.2 to 0.5.3.post1): the statements of R's
        ``ModelRunner.initialize`` that set ``server_args.max_mamba_cache_size`` (K: the flag,
        else ``--max-running-requests``, else 512, // dp under DP attention), then the
        ``if ...: rest_memory -= K * mamba_cache_per_req / 2**30`` of R's
        ``profile_max_num_token``, as one function of ``(self, rest_memory)`` returning the rest.
        The hybrid predicates those statements test (``is_hybrid_gdn``, ``mambaish_config``,
        ...) are R's own ``ModelRunner`` properties."""
        path = self.root / relative
        source = path.read_text(encoding="utf-8")
        initialize = locate(self.root, ("initialize",), (relative,), cls="ModelRunner")
        profile = locate(self.root, ("profile_max_num_token",), (relative,), cls="ModelRunner")
        if initialize is None or profile is None:
            raise LookupError(f"sglang {self.version}: no initialize / profile_max_num_token")

        def sets_k(statement: ast.stmt) -> bool:
            return any(
                isinstance(node, ast.Assign)
                and any(
                    isinstance(t, ast.Attribute) and t.attr == "max_mamba_cache_size"
                    for t in node.targets
                )
                for node in ast.walk(statement)
            )

        def takes_pool(statement: ast.stmt) -> bool:
            return isinstance(statement, ast.If) and any(
                isinstance(node, ast.AugAssign)
                and isinstance(node.target, ast.Name)
                and node.target.id == "rest_memory"
                and "max_mamba_cache_size" in (ast.get_source_segment(source, node) or "")
                for node in ast.walk(statement)
            )

        k_statements = [s for s in initialize[2].body if sets_k(s)]
        rest_statements = [s for s in profile[2].body if takes_pool(s)]
        if not k_statements or len(rest_statements) != 1:
            raise LookupError(
                f"sglang {self.version}: initialize sets no max_mamba_cache_size, or "
                "profile_max_num_token has no single rest_memory -= ... pool statement"
            )
        first = k_statements[0]
        if isinstance(first, ast.If):
            self.hybrid_test = (
                first.test,
                str(path),
                f"sglang-{self.version}:{relative}:{first.lineno} "
                f"({ast.get_source_segment(source, first.test)})",
            )
        function = ast.parse("def _early_pool(self, rest_memory):\n    return rest_memory").body[0]
        assert isinstance(function, ast.FunctionDef)
        tail = function.body
        function.body = [copy.deepcopy(s) for s in (*k_statements, *rest_statements)] + tail
        ast.copy_location(function, first)
        ast.copy_location(tail[0], rest_statements[0])
        ast.fix_missing_locations(function)
        for name in PREDICATES:
            found = locate(self.root, (name,), (relative,), cls="ModelRunner")
            if found is not None:
                self.predicates[name] = self._compile(found, f"predicate {name}")
        self.where["pool"] = (
            f"sglang-{self.version}:{relative}:"
            + ",".join(f"{s.lineno}-{s.end_lineno}" for s in k_statements)
            + " (ModelRunner.initialize: the max_mamba_cache_size statements) + "
            + f"{rest_statements[0].lineno}-{rest_statements[0].end_lineno} "
            "(ModelRunner.profile_max_num_token: rest_memory -= K * mamba_cache_per_req)"
        )
        namespace = self._globals()
        exec(compile(ast.Module(body=[function], type_ignores=[]), str(path), "exec"), namespace)
        return namespace["_early_pool"]

    def _mamba_pool_size(
        self, init: tuple[str, str | None, ast.FunctionDef]
    ) -> tuple[ast.expr, str] | None:
        """The number of request slots R's ``MambaPool`` is built with (it allocates one more):
        the argument of R's ``HybridReqToTokenPool(...)`` call in ``init_memory_pool`` that R's
        ``HybridReqToTokenPool.__init__`` (``mem_cache/memory_pool.py``) passes to
        ``MambaPool(size, ...)``: ``max_num_reqs`` up to 0.5.3.post1, ``mamba_size=
        server_args.max_mamba_cache_size`` (K) from 0.5.3.post2. ``None`` where not found."""
        relative = "sglang/srt/mem_cache/memory_pool.py"
        hybrid = locate(self.root, ("__init__",), (relative,), cls="HybridReqToTokenPool")
        if hybrid is None:
            return None
        parameters = [a.arg for a in (*hybrid[2].args.posonlyargs, *hybrid[2].args.args)][1:]
        methods = {
            item.name: item
            for node in _parse(self.root / relative).body
            if isinstance(node, ast.ClassDef) and node.name == "HybridReqToTokenPool"
            for item in node.body
            if isinstance(item, ast.FunctionDef)
        }
        found = _mamba_size_argument(hybrid[2], methods)
        parameter = found[0].id if found and isinstance(found[0], ast.Name) else None
        if found is not None and parameter is not None:
            self.where["mamba_pool_size"] = (
                f"sglang-{self.version}:{relative}:{found[1]} "
                f"(MambaPool(size=...) built from HybridReqToTokenPool.__init__'s {parameter})"
            )
        if parameter is None:
            return None
        source = (self.root / init[0]).read_text(encoding="utf-8")
        for node in ast.walk(init[2]):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "HybridReqToTokenPool"
            ):
                value = next((k.value for k in node.keywords if k.arg == parameter), None)
                if value is None and parameter in parameters:
                    index = parameters.index(parameter)
                    value = node.args[index] if index < len(node.args) else None
                if value is None:
                    return None
                self.where["mamba_pool_size"] += (
                    f"; {parameter}={ast.get_source_segment(source, value)} "
                    f"(sglang-{self.version}:{init[0]}:{node.lineno}, HybridReqToTokenPool)"
                )
                return value, str(self.root / init[0])
        return None

    def _truncated(self, node: ast.FunctionDef, relative: str) -> tuple[list[ast.stmt], int]:
        """``init_memory_pool``'s statements up to the first that builds a pool (the hybrid-SWA
        token split skipped; the "Not enough memory" check kept), then ``return locals()``."""
        source = (self.root / relative).read_text(encoding="utf-8")
        kept: list[ast.stmt] = []
        for statement in node.body:
            text = ast.get_source_segment(source, statement) or ""
            if "req_to_token_pool" in text or "ReqToTokenPool" in text:
                break
            if re.search(r"\bis_hybrid\b", text):  # the hybrid-SWA token split: no SWA layer
                continue
            kept.append(statement)
        end = kept[-1].end_lineno if kept else node.lineno
        tail = ast.parse("return locals()").body
        for statement in tail:
            ast.copy_location(statement, kept[-1] if kept else node)
            ast.fix_missing_locations(statement)
        return [*kept, *tail], end or node.lineno

    def _resolution(self) -> Any:
        """``_mamba_radix_cache_resolution`` of ``arg_groups/overrides.py`` (0.5.15 on), with
        ``supports_mamba_cache_extra_buffer`` and the architecture lists of the same file;
        ``None`` before 0.5.15 (the strategy resolution is then the package's)."""
        relative = "sglang/srt/arg_groups/overrides.py"
        path = self.root / relative
        found = locate(self.root, ("_mamba_radix_cache_resolution",), (relative,))
        support = locate(self.root, ("supports_mamba_cache_extra_buffer",), (relative,))
        if found is None or support is None:
            return None
        constants = _literal_constants(path)
        self.constants.update({k: v for k, v in constants.items() if k.startswith("_MAMBA_")})
        self.helpers["supports_mamba_cache_extra_buffer"] = self._compile(
            support, "extra_buffer_support"
        )
        backend = _field_default(self.root, "linear_attn_backend")
        self.linear_attn_backend = backend[0] if backend else "triton"
        if backend:
            self.where["default linear_attn_backend"] = f"{backend[0]!r} ({backend[1]})"
        return self._compile(found, "resolution")

    def resolve(
        self,
        architecture: str,
        config: Mapping[str, Any],
        disable_radix_cache: bool,
        strategy: str = "auto",
        disable_overlap_schedule: bool = False,
    ) -> tuple[bool, str, bool]:
        """The release's own resolution of the radix-cache strategy: (radix cache off,
        strategy, overlap scheduler on)."""
        assert self.resolution_fn is not None
        touched = self.touched
        hf_config = _Bag(
            touched,
            "hf_config",
            architectures=[architecture],
            layer_types=list(config.get("layer_types") or []),
        )
        model_config = _Bag(touched, "model_config", hf_config=hf_config)
        view = _Bag(
            touched,
            "view",
            disable_radix_cache=disable_radix_cache,
            mamba_radix_cache_strategy=strategy,
            disable_overlap_schedule=disable_overlap_schedule,
            page_size=None,
            linear_attn_backend=self.linear_attn_backend,
            get_model_config=lambda: model_config,
        )
        with _registry_stub():
            declared = self.resolution_fn(view)
        if disable_radix_cache:
            return True, "none", not disable_overlap_schedule
        resolved = declared.get("mamba_radix_cache_strategy", strategy)
        overlap = not declared.get("disable_overlap_schedule", disable_overlap_schedule)
        return False, resolved, overlap

    def _rest_check(self, relative: str) -> Any:
        """The ``if rest_memory <= 0: raise ...`` of the release's ``_profile_available_bytes``,
        as a function of ``rest_memory`` (``None`` where the release has none)."""
        found = locate(self.root, ("_profile_available_bytes",), (relative,))
        if found is None:
            return None
        path = self.root / found[0]
        source = path.read_text(encoding="utf-8")
        for node in ast.walk(found[2]):
            if (
                isinstance(node, ast.If)
                and (ast.get_source_segment(source, node.test) or "").replace(" ", "")
                == "rest_memory<=0"
            ):
                function = ast.parse(
                    "def _rest_check(self, rest_memory, available_gpu_memory, "
                    "pre_model_load_memory):\n    pass"
                ).body[0]
                assert isinstance(function, ast.FunctionDef)
                function.body = [copy.deepcopy(node)]
                ast.copy_location(function, node)
                ast.fix_missing_locations(function)
                module = ast.Module(body=[function], type_ignores=[])
                namespace = self._globals()
                exec(compile(module, str(path), "exec"), namespace)
                self.where["rest_check"] = (
                    f"sglang-{self.version}:{found[0]}:{node.lineno}-{node.end_lineno} "
                    "(the rest_memory <= 0 check of _profile_available_bytes)"
                )
                return namespace["_rest_check"]
        return None

    def _final_cap_expression(self) -> tuple[ast.expr, str] | None:
        """The release's ``self.max_running_requests = min(..., req_to_token_pool.size)``."""
        for relative in CAP_FILES:
            path = self.root / relative
            if not path.exists():
                continue
            source = path.read_text(encoding="utf-8")
            for node in ast.walk(_parse(path)):
                if (
                    isinstance(node, ast.Assign)
                    and len(node.targets) == 1
                    and isinstance(node.targets[0], ast.Attribute)
                    and node.targets[0].attr == "max_running_requests"
                    and "req_to_token_pool.size" in (ast.get_source_segment(source, node) or "")
                ):
                    self.where["final_cap"] = (
                        f"sglang-{self.version}:{relative}:{node.lineno}-{node.end_lineno}"
                    )
                    return node.value, str(path)
        return None

    def _defaults(self) -> dict[str, tuple[Any, str]]:
        out: dict[str, tuple[Any, str]] = {}
        for name in (
            "mamba_full_memory_ratio",
            "max_mamba_cache_size",
            "max_total_tokens",
            "dp_size",
            "enable_dp_attention",
        ):
            found = _field_default(self.root, name)
            if found is not None:
                out[name] = (found[0], f"sglang-{self.version}:{found[1]}")
        running = _speculative_running_default(self.root)
        if running is not None:
            out["speculative_max_running_requests"] = (
                running[0],
                f"sglang-{self.version}:{running[1]}",
            )
        for name in ("SGLANG_OPT_MAMBA_SKIP_DECODE_LOCK",):
            if name in self.env_where:
                out[name] = (
                    self.envs._defaults[name],
                    f"sglang-{self.version}:{self.env_where[name]}",
                )
        return out

    def missing_flag(self, name: str) -> str | None:
        """A refusal where R's ServerArgs has no argument for the package's flag ``name`` (R's
        argument parser rejects the flag), else ``None``."""
        names = FLAG_NAMES.get(name, (name,))
        for candidate in names:
            where = _field_where(self.root, candidate)
            if where is not None:
                self.where[f"flag {name}"] = f"sglang-{self.version}:{where} ({candidate})"
                return None
        self.where[f"flag {name}"] = f"none of {', '.join(names)} in R's ServerArgs"
        return (
            f"NoSuchArgument: sglang {self.version} has no --{names[-1].replace('_', '-')} "
            f"(no ServerArgs field {' / '.join(names)})"
        )

    # -- one case ----------------------------------------------------------------------------

    def case(
        self,
        *,
        per_req: int,
        state_layers: int,
        cell: int | None,
        context_len: int,
        page_size: int,
        budget: int,
        spec: int,
        disable_radix_cache: bool,
        strategy: str,
        overlap: bool,
        max_running_requests: int | None = None,
        max_mamba_cache_size: int | None = None,
        architecture: str | None = None,
        model_type: str | None = None,
    ) -> dict[str, Any]:
        """K, the pool bytes, the ratio, the KV tokens and the running cap for one launch, from
        the release's own functions; ``{"refusal": ...}`` where they refuse."""
        self.touched.clear()
        defaults = self.defaults
        ratio_flag = defaults.get("mamba_full_memory_ratio", (0.9, ""))[0]
        running = max_running_requests
        if spec and running is None:
            running = defaults.get("speculative_max_running_requests", (48, ""))[0]
        extra = strategy in ("extra_buffer", "extra_buffer_lazy") and not disable_radix_cache
        touched = self.touched
        args = _Bag(
            touched,
            "server_args",
            speculative_num_draft_tokens=spec or None,
            speculative_num_steps=(spec - 1) if spec else None,
            speculative_eagle_topk=1 if spec else None,
            disable_radix_cache=disable_radix_cache,
            max_mamba_cache_size=max_mamba_cache_size
            if max_mamba_cache_size is not None
            else defaults.get("max_mamba_cache_size", (None, ""))[0],
            max_running_requests=running,
            max_total_tokens=defaults.get("max_total_tokens", (None, ""))[0],
            mamba_full_memory_ratio=ratio_flag,
            dp_size=1,
            enable_dp_attention=False,
            disable_overlap_schedule=not overlap,
            mamba_scheduler_strategy=strategy,
            mamba_radix_cache_strategy=strategy,
            page_size=page_size,
            disaggregation_mode="null",
            kv_cache_dtype="auto",
            mem_fraction_static=None,  # only printed in the release's refusal
            enable_memory_saver=False,
            pp_size=1,
            attn_dp_size=1,
        )
        for name, function in self.server_methods.items():
            object.__setattr__(args, name, functools.partial(function, args))
        lazy = extra and strategy == "extra_buffer_lazy"
        if "mamba_extra_buffer_of" in self.helpers:
            # The derived exec flags (0.5.20+: Derived(fn=...mamba_extra_buffer_of), R's
            # arg_groups/fields/exec_.py), from R's own predicates.
            extra = bool(self.helpers["mamba_extra_buffer_of"](args))
            if "mamba_extra_buffer_lazy_of" in self.helpers:
                lazy = bool(self.helpers["mamba_extra_buffer_lazy_of"](args))
        mamba = _Bag(
            touched,
            "exec.mamba",
            enable_mamba_extra_buffer=extra,
            enable_mamba_extra_buffer_lazy=lazy,
            mamba_radix_cache_strategy=strategy,
            enable_linear_replayssm_spec=False,
            linear_replayssm_cache_len=None,
        )

        def override(_key: str, **values: Any) -> None:
            for name, value in values.items():
                object.__setattr__(args, name, value)

        # ServerArgs.override (0.5.16-0.5.18) / get_context().override (0.5.19+): set the value.
        object.__setattr__(args, "override", override)
        self._current.update(
            schedule=args,
            exec=_Bag(touched, "exec", mamba=mamba),
            parallel=_Bag(touched, "parallel", pp_size=1, attn_dp_size=1, tp_size=1),
            context=_Bag(touched, "context", override=override),
        )
        params = _Bag(
            touched,
            "mamba2_cache_params",
            mamba_cache_per_req=per_req,
            layers=list(range(state_layers)),
        )
        hybrid = _Bag(touched, "mambaish_config", mamba2_cache_params=params)
        runner_class: type[_Bag] = _Bag
        views: dict[str, Any] = {
            "mambaish_config": hybrid,
            "hybrid_gdn_config": None,
            "hybrid_kda_config": None,
        }
        model_config = _Bag(touched, "model_config", context_len=context_len)
        if self.early:
            # 0.5.2 to 0.5.3.post1: R's own ModelRunner properties decide whether the model is
            # a mamba hybrid, on an hf_config of R's config class for the fixture's model_type
            # (a plain config where R has none) carrying the per-request bytes fed in (R's own,
            # release_state.py).
            config_class = next(
                (c for c in self.config_classes.values()
                 if getattr(c, "model_type", None) == model_type),
                _Bag,
            )  # fmt: skip
            hf_config = config_class(
                touched,
                "hf_config",
                architectures=[architecture],
                mamba_cache_per_req=per_req,
                mamba2_cache_params=params,
            )
            object.__setattr__(model_config, "hf_config", hf_config)
            runner_class = type(
                "ModelRunner", (_Bag,), {n: property(f) for n, f in self.predicates.items()}
            )
            views = {k: v for k, v in views.items() if k not in self.predicates}
        runner = runner_class(
            touched,
            "self",
            server_args=args,
            **views,
            model_config=model_config,
            spec_algorithm=_SpecAlgorithm(spec),
            dp_size=1,
            attn_dp_size=1,
            pp_size=1,
            tp_size=1,
            is_draft_worker=False,
            extra_mamba_cache_bytes_per_req=0,
            fused_entry_bytes=lambda kind: None,
            page_size=page_size,
            ps=_Bag(touched, "ps", attn_dp_size=1, pp_size=1, tp_size=1, dp_size=1),
        )
        if self.ratio_fn is not None:
            object.__setattr__(runner, "_calculate_mamba_ratio", lambda: self.ratio_fn(runner))
        answer: dict[str, Any] = {}
        rest = budget / (1 << 30)

        def profile(*_args: Any, **_kwargs: Any) -> int:
            after = self.pool_fn(runner, rest)
            answer["slots"] = args.max_mamba_cache_size
            answer["rest_after"] = after
            if self.rest_check_fn is not None:
                # available/pre only enter the refusal's message.
                self.rest_check_fn(runner, after, rest, float("inf"))
            if cell is None:
                # The package refused after the state: no cell to feed. Run on with a cell of 1
                # byte, which keeps the sign of the tokens, so only the release's refusal of a
                # budget the pool leaves empty is read from this run.
                answer["partial"] = "no KV bytes per token (the package refused)"
            if cell == 0:
                # An attention-free model: the release's zero-cell tokens, max_total_tokens or
                # the context length (DefaultPoolConfigurator._zero_kv_max_tokens,
                # sglang-0.5.20:sglang/srt/model_executor/pool_configurator.py:219-225, mirrored).
                tokens = args.max_total_tokens or context_len
            else:
                tokens = int(after * (1 << 30)) // (cell or 1)
            answer["profiled_tokens"] = tokens
            return tokens

        object.__setattr__(runner, "profile_max_num_token", profile)
        if self.early and self.hybrid_test is not None:
            test, filename, where = self.hybrid_test
            code = compile(ast.Expression(body=test), filename, "eval")
            if not eval(code, self._globals(), {"self": runner}):  # R's own predicate
                return {
                    "refusal": f"NotHybrid: sglang {self.version} builds no mamba pool for "
                    f"{architecture} (model_type {model_type}): {where} is false"
                }
        try:
            if self.cap_fn is not None:
                tokens = profile()
                if self.constraints_fn is not None:
                    tokens = self.constraints_fn(runner, tokens)
                else:
                    tokens = (
                        tokens
                        if args.max_total_tokens is None
                        else min(tokens, args.max_total_tokens)
                    )
                tokens = tokens // page_size * page_size
                answer["kv_tokens"] = tokens
                if self.post_init_fn is not None:
                    check = _Bag(touched, "config", max_total_num_tokens=tokens,
                                 mem_fraction_static=None)  # fmt: skip
                    self.post_init_fn(check)
                answer["ratio"] = runner._calculate_mamba_ratio()
                answer["max_running_requests"] = self.cap_fn(runner, tokens)
            else:
                answer.update(self._old_cap(runner, args))
        except (RuntimeError, AssertionError, ValueError) as error:
            return {
                "refusal": f"{type(error).__name__}: {' '.join(str(error).split())}",
                **{k: v for k, v in answer.items() if k in ("slots",)},
            }
        unknown = sorted(n for n in touched if "." not in n and n not in LOOSE_GLOBALS)
        unknown = [n for n in unknown if not n.endswith("()")]
        if unknown:
            raise LookupError(f"globals not stood in for: {', '.join(unknown)}")
        if "partial" in answer:
            return {k: v for k, v in answer.items() if k in ("slots", "partial", "rest_after")}
        if "slots" in answer:
            # MambaPool(size) allocates size + 1 slots; size is what R's own construction passes
            # (before 0.5.10, ``_mamba_pool_size``), else K (mirrored).
            size = answer.pop("mamba_size", None)
            answer["pool_bytes"] = ((answer["slots"] if size is None else size) + 1) * per_req
        if self.early:
            # R's initialize turns the radix cache off itself for the models it sizes a pool
            # for (sglang-0.5.2:sglang/srt/model_executor/model_runner.py:310): compared with
            # the package's resolution, in the grid's words (release_sglang_grid._strategy_text).
            answer["strategy"] = (
                "radix cache off"
                if args.disable_radix_cache
                else f"no extra buffer, overlap {'on' if overlap else 'off'}"
            )
        answer["touched"] = sorted(n for n in touched if not n.startswith(("logger", "envs.")))
        return answer

    def _old_cap(self, runner: Any, args: Any) -> dict[str, Any]:
        """Before 0.5.10: the truncated ``init_memory_pool`` and the final ``min``."""
        assert self.init_fn is not None
        import inspect

        parameters = list(inspect.signature(self.init_fn).parameters)
        kwargs: dict[str, Any] = {}
        if "max_num_reqs" in parameters:
            # ModelRunner.__init__ passes server_args.max_running_requests / max_total_tokens
            # (sglang-0.5.3.post3:sglang/srt/model_executor/model_runner.py:460-464).
            kwargs["max_num_reqs"] = args.max_running_requests
        if "max_total_tokens" in parameters:
            kwargs["max_total_tokens"] = args.max_total_tokens
        if "server_args" in parameters:  # 0.5.7: init_memory_pool(total_gpu_memory, server_args)
            kwargs["server_args"] = args
        local = self.init_fn(runner, 0, **kwargs)
        tokens = runner.max_total_num_tokens
        size = local["max_num_reqs"]
        # Before 0.5.3.post2 init_memory_pool has no ratio: it caps max_num_reqs at K itself
        # (sglang-0.5.2:sglang/srt/model_executor/model_runner.py:1262-1263) and each request
        # maps to one mamba slot (HybridReqToTokenPool.req_index_to_mamba_index_mapping), which
        # is the package's ratio 1 (its field is the state slots one request holds): mirrored.
        ratio = local.get("ratio", 1)
        if "ratio" not in local:
            self.where["ratio"] = "none in R's init_memory_pool: one mamba slot a request (1)"
        out = {"ratio": ratio, "kv_tokens": tokens, "pool_size": size}
        if self.mamba_size is not None:
            expression, filename = self.mamba_size
            out["mamba_size"] = eval(  # the release's own argument to HybridReqToTokenPool
                compile(ast.Expression(body=expression), filename, "eval"),
                self._globals(),
                {**local, "self": runner},
            )
        elif self.early:
            raise LookupError("no HybridReqToTokenPool(...) size argument found")
        if self.final_cap is None:
            raise LookupError("no final max_running_requests expression")
        expression, filename = self.final_cap
        code = compile(ast.Expression(body=expression), filename, "eval")
        pool = _Bag(self.touched, "req_to_token_pool", size=size)
        worker = _Bag(
            self.touched,
            "worker",
            max_total_num_tokens=tokens,
            req_to_token_pool=pool,
            model_runner=_Bag(self.touched, "model_runner", req_to_token_pool=pool),
            server_args=args,
            dp_size=1,
        )
        out["max_running_requests"] = eval(  # the release's own expression
            code, self._globals(), {"self": worker, "server_args": args}
        )
        return out
