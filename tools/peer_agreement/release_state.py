"""One SGLang release's own per-request mamba state bytes and state-layer count.

Run as a script, one interpreter per release (each release's ``sglang`` package is imported
under the same names)::

    PY release_state.py ROOT < jobs.jsonl > answers.jsonl

``ROOT`` holds the release's extracted ``sglang/`` (``/work/peer_cache/sglang-R``). A job is
``{"config": path, "tp": n}``; the answer, a line each, is ``{"per_req": p, "layers": n, ...}``
(what R's pool code reads: ``mamba_cache_per_req`` and the state layers) or ``{"refusal":
"Type: message", "at": "file:line"}`` (R's class or property raised on the config: the server
fails to start) or ``{"not_hybrid": why}`` (R's own predicate picks no mamba config: no pool) or
``{"no_class": why}``.

From R's own tree, each found by name (never at another release's path):

* the config class: R's ``_CONFIG_REGISTRY`` entry for the model type (wherever R defines the
  table: ``hf_transformers_utils.py`` early, ``utils/hf_transformers/common.py`` late) or a
  class R's ``configs/*.py`` registers with transformers itself (``AutoConfig.register``,
  ``CONFIG_MAPPING._extra_content``); else the installed transformers' class (R builds
  ``AutoConfig``'s); built with ``from_dict`` on the fixture's config.json;
* which config R sizes the pool from: R's ``mambaish_config`` (a ``ModelRunner`` property of
  ``model_executor/model_runner.py`` 0.5.3.post1 - 0.5.15.post1, with the ``*_config``
  properties it calls; a function of ``configs/hybrid_arch.py`` from 0.5.16) run on the built
  config; 0.5.2 and 0.5.3, which have none, R's ``ModelRunner.is_hybrid_gdn``;
* the bytes and layers: ``mamba2_cache_params.mamba_cache_per_req`` and ``len(...layers)`` of
  the chosen config (R's ``configs/mamba_utils.py`` and the class's property), or for 0.5.2 /
  0.5.3 ``hf_config.mamba_cache_per_req`` and the ``mamba_layers`` of ``hybrid_gdn_params``
  (what R's ``profile_max_num_token`` and ``init_memory_pool`` read).

Stood in for (written here): torch (dtypes with torch's ``itemsize``; everything else a
placeholder); the tensor-parallel getters R's classes call (``get_attention_tp_size``,
``get_tensor_model_parallel_world_size``, ``get_parallel()``, ``linear_attn_tp_size``) answer
``tp`` (one attention-DP shard); ``sglang.srt.environ``'s ``envs.X.get()`` answers the default
R's ``environ.py`` declares; ``SGLANG_MAMBA_SSM_DTYPE`` is what R's ``server_args.py`` sets from
the ``--mamba-ssm-dtype`` default (a string default: set, in ``os.environ`` and ``envs``; ``None``:
unset); any other ``sglang.*`` module but ``sglang.srt.configs.*`` and
``sglang.srt.distributed.utils`` and ``sglang.srt.layers.attention.mamba.mamba_utils`` (run from
R) is a placeholder. Only the standard library,
numpy and transformers are imported here.
"""

from __future__ import annotations

import ast
import contextlib
import copy
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import io
import json
import os
import re
import sys
import traceback
import types
from collections.abc import Mapping
from pathlib import Path
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import release_cell
from config_classes import STUB_ROOTS, Dummy, StubModule
from sglang_tree import class_model_type, class_modules, self_registered

# The attention layers' head-split asserts (as tools/peer_agreement/states.py matches them).
HEADS_SPLIT = re.compile(
    r"self\.(total_num_heads|num_q_heads_full) % (self\.)?(attn_)?tp_size == 0"
)
GROUPS_SPLIT = re.compile(r"self\.num_k_heads_full % self\.tp_size == 0")
BARE = (
    "sglang",
    "sglang.srt",
    "sglang.srt.distributed",
    "sglang.srt.layers",
    "sglang.srt.layers.attention",
    "sglang.srt.layers.attention.mamba",
)
# Run from R besides its configs: divide, and 0.5.3's MambaStateShapeCalculator (which its
# FalconH1Config imports from the layer package).
REAL = ("sglang.srt.distributed.utils", "sglang.srt.layers.attention.mamba.mamba_utils")
# Run from R too where R's cell code is run (release_cell.py): R's ModelConfig and the config
# helpers it imports.
CELL_REAL = (
    "sglang.srt.hf_transformers_utils",
    "sglang.srt.utils.hf_transformers_utils",
    "sglang.srt.utils.hf_transformers",  # 0.5.11+: the helpers moved here (and its modules)
)


class _Dtype:
    """A torch dtype as R's sizing reads one: a name and torch's ``itemsize``."""

    def __init__(self, name: str, itemsize: int) -> None:
        self.name, self.itemsize = name, itemsize

    def __repr__(self) -> str:
        return f"torch.{self.name}"


def _torch() -> types.ModuleType:
    torch = StubModule("torch")
    torch.__path__ = []  # type: ignore[attr-defined]
    torch.__version__ = "2.9.0+stub"  # type: ignore[attr-defined]
    torch.dtype = _Dtype  # type: ignore[attr-defined]
    for name, size, aliases in (
        ("float32", 4, ("float",)), ("float16", 2, ("half",)), ("bfloat16", 2, ()),
        ("float64", 8, ("double",)), ("int8", 1, ()), ("uint8", 1, ()), ("int32", 4, ("int",)),
        ("int64", 8, ("long",)), ("float8_e4m3fn", 1, ()), ("float8_e5m2", 1, ()),
        ("bool", 1, ()),
    ):  # fmt: skip
        dtype = _Dtype(name, size)
        for alias in (name, *aliases):
            setattr(torch, alias, dtype)
    return torch


class _Env:
    def __init__(self, value: Any) -> None:
        self.value = value

    def get(self) -> Any:
        return self.value

    def set(self, value: Any) -> None:
        self.value = value

    def is_set(self) -> bool:
        return self.value is not None


class _Envs:
    """``envs.NAME``: the default R's ``environ.py`` declares (``None`` where it declares
    none)."""

    def __init__(self, defaults: Mapping[str, Any]) -> None:
        self._values = {name: _Env(value) for name, value in defaults.items()}

    def __getattr__(self, name: str) -> _Env:
        if name.startswith("__"):
            raise AttributeError(name)
        return self._values.setdefault(name, _Env(None))


def env_defaults(root: Path) -> dict[str, Any]:
    """``NAME = EnvX(default)`` of R's ``sglang/srt/environ.py`` (empty where R has none)."""
    path = root / "sglang/srt/environ.py"
    out: dict[str, Any] = {}
    if not path.exists():
        return out
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Assign | ast.AnnAssign):
            target = node.targets[0] if isinstance(node, ast.Assign) else node.target
            value = node.value
            if isinstance(target, ast.Name) and isinstance(value, ast.Call) and value.args:
                with contextlib.suppress(ValueError, TypeError, SyntaxError):
                    out[target.id] = ast.literal_eval(value.args[0])
    return out


def ssm_dtype_default(root: Path) -> tuple[str | None, str]:
    """The ``mamba_ssm_dtype`` default of R's ``ServerArgs`` (``server_args.py``, from 0.5.19
    ``arg_groups/fields/*.py``), which R's server arguments set as ``SGLANG_MAMBA_SSM_DTYPE``
    when it is not ``None``; with where it is declared."""
    files = [root / "sglang/srt/server_args.py"]
    files += sorted((root / "sglang/srt/arg_groups/fields").glob("*.py"))
    for path in files:
        if not path.exists():
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.AnnAssign)
                and isinstance(node.target, ast.Name)
                and node.target.id == "mamba_ssm_dtype"
            ):
                where = f"{path.relative_to(root)}:{node.lineno}"
                for sub in ast.walk(node.annotation):
                    if isinstance(sub, ast.keyword) and sub.arg in ("fallback", "default"):
                        return ast.literal_eval(sub.value), where
                if node.value is not None:
                    with contextlib.suppress(ValueError, TypeError, SyntaxError):
                        return ast.literal_eval(node.value), where
    return None, "no mamba_ssm_dtype in R's ServerArgs"


class Parallel:
    tp = 1

    def context(self) -> types.SimpleNamespace:
        return types.SimpleNamespace(
            tp_size=self.tp, attn_tp_size=self.tp, moe_tp_size=self.tp, attn_dp_size=1,
            attn_cp_size=1, pp_size=1, dp_size=1, tp_rank=0, attn_tp_rank=0, moe_ep_size=1,
        )  # fmt: skip


class _Loader(importlib.abc.Loader):
    def __init__(self, module: types.ModuleType | None) -> None:
        self.module = module

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        if self.module is not None:
            return self.module
        module = StubModule(spec.name)
        module.__path__ = []  # type: ignore[attr-defined]
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        pass


class _Tolerant(importlib.abc.Loader):
    """Loads one of R's config helper modules run for the cell (``CELL_REAL``); where R's module
    fails here (an import it needs that is not run), it becomes a placeholder, so that the state
    (which ran with placeholders before) is unaffected, and the failure is recorded: the
    release's cell is then an oracle gap (``release_cell.Cell.answer``)."""

    def __init__(self, loader: Any, failures: dict[str, str]) -> None:
        self.loader, self.failures = loader, failures

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> Any:
        return self.loader.create_module(spec)

    def exec_module(self, module: types.ModuleType) -> None:
        try:
            self.loader.exec_module(module)
        except Exception as error:
            self.failures[module.__name__] = f"{type(error).__name__}: {error}"[:200]
            module.__class__ = StubModule


class _Finder(importlib.abc.MetaPathFinder):
    """``sglang.srt.configs.*`` and ``REAL`` from R's tree (its packages without their
    ``__init__``), the ``stubs`` as given, every other ``sglang`` module and ``STUB_ROOTS`` a
    placeholder."""

    def __init__(
        self, root: Path, stubs: Mapping[str, types.ModuleType], real: tuple[str, ...] = REAL
    ) -> None:
        self.root, self.stubs, self.real = root, stubs, real
        self.cell_failures: dict[str, str] = {}

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name in self.stubs:
            return importlib.machinery.ModuleSpec(name, _Loader(self.stubs[name]))
        top = name.split(".")[0]
        if name in BARE:
            spec = importlib.machinery.ModuleSpec(name, None, is_package=True)
            spec.submodule_search_locations = [str(self.root.joinpath(*name.split(".")))]
            return spec
        if name in self.real or name.startswith(
            ("sglang.srt.configs.", *(f"{r}." for r in self.real if r.endswith("hf_transformers")))
        ):
            base = self.root.joinpath(*name.split("."))
            file = base / "__init__.py" if base.is_dir() else base.with_suffix(".py")
            if file.is_file():
                spec = importlib.util.spec_from_file_location(
                    name, file, submodule_search_locations=[str(base)] if base.is_dir() else None
                )
                if spec is not None and name.startswith(CELL_REAL):
                    spec.loader = _Tolerant(spec.loader, self.cell_failures)
                return spec
        if top == "sglang" or top in STUB_ROOTS:
            return importlib.machinery.ModuleSpec(name, _Loader(None), is_package=True)
        return None


class _Configs(types.ModuleType):
    """``sglang.srt.configs`` whose names import, on first use, the module R's
    ``configs/__init__.py`` imports them from (the package ``__init__`` imports every model's
    config; only what is touched runs)."""

    def __init__(self, root: Path, failed: dict[str, str]) -> None:
        super().__init__("sglang.srt.configs")
        self.__path__ = [str(root / "sglang/srt/configs")]
        self._modules = class_modules(root)
        self._failed = failed

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        module = self._modules.get(name)
        if module is None:
            raise AttributeError(name)
        try:
            value = getattr(importlib.import_module(module), name)
        except Exception as error:  # a config module that does not run here
            self._failed[name] = f"{type(error).__name__}: {error}"[:200]
            # A placeholder class that no model type names (R's hf_transformers helpers read
            # every registered class's model_type at import).
            value = type(name, (), {"model_type": f"<unimportable {name}>"})
        setattr(self, name, value)
        return value


def registry(root: Path) -> tuple[dict[str, tuple[str, str]], str]:
    """model_type -> (module, class) of R's ``_CONFIG_REGISTRY`` (found by name in R's tree)
    and of the classes R's ``configs/*.py`` register with transformers themselves."""
    modules = class_modules(root)
    table: dict[str, tuple[str, str]] = {}
    where = "no _CONFIG_REGISTRY in R"
    for path in sorted((root / "sglang").rglob("*.py")):
        text = path.read_text(encoding="utf-8", errors="replace")
        if "_CONFIG_REGISTRY" not in text or "configs" in path.parts[-2:-1]:
            continue
        for node in ast.parse(text).body:
            target = (
                node.target
                if isinstance(node, ast.AnnAssign)
                else node.targets[0]
                if isinstance(node, ast.Assign)
                else None
            )
            if target is None or ast.unparse(target) != "_CONFIG_REGISTRY":
                continue
            value = node.value
            names: list[str] = []
            if isinstance(value, ast.DictComp) and isinstance(value.generators[0].iter, ast.List):
                names = [ast.unparse(item) for item in value.generators[0].iter.elts]
            elif isinstance(value, ast.Dict):
                names = [ast.unparse(item) for item in value.values]
            elif isinstance(value, ast.List):  # 0.5.2 - 0.5.9: a list, then a dict of it
                names = [ast.unparse(item) for item in value.elts]
            if not names:
                continue
            where = f"{path.relative_to(root)}:{node.lineno}"
            for name in names:
                module = modules.get(name)
                if module is None:
                    continue
                file = root / (module.replace(".", "/") + ".py")
                model_type = class_model_type(file, name)
                if model_type is not None:
                    table.setdefault(model_type, (module, name))
    for model_type, module, cls in self_registered(root):
        table.setdefault(model_type, (module, cls))
    return table, where


def _find_method(root: Path, relative: str, cls: str | None, name: str) -> ast.FunctionDef | None:
    path = root / relative
    if not path.exists():
        return None
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if cls is None and isinstance(node, ast.FunctionDef) and node.name == name:
            return node
        if isinstance(node, ast.ClassDef) and node.name == cls:
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == name:
                    return item
    return None


class Release:
    """R's config classes and its choice of the config the pool is sized from."""

    def __init__(self, root: Path) -> None:
        import transformers
        import transformers.configuration_utils

        self.root = root
        self.transformers = transformers.__version__
        self.parallel = Parallel()
        self.failed: dict[str, str] = {}
        defaults = env_defaults(root)
        self.ssm_dtype, self.ssm_where = ssm_dtype_default(root)
        if self.ssm_dtype is not None:
            # R's ServerArgs sets the variable from --mamba-ssm-dtype (os.environ early,
            # envs.SGLANG_MAMBA_SSM_DTYPE.set later).
            os.environ["SGLANG_MAMBA_SSM_DTYPE"] = self.ssm_dtype
            defaults["SGLANG_MAMBA_SSM_DTYPE"] = self.ssm_dtype
        else:
            os.environ.pop("SGLANG_MAMBA_SSM_DTYPE", None)
        tp = lambda: self.parallel.tp  # noqa: E731
        stubs: dict[str, types.ModuleType] = {"torch": _torch()}
        for name, values in (
            ("sglang.srt.environ", {"envs": _Envs(defaults)}),
            ("sglang.srt.layers.dp_attention", {"get_attention_tp_size": tp,
                                                "get_tensor_model_parallel_world_size": tp}),
            ("sglang.srt.distributed.parallel_state",
             {"get_tensor_model_parallel_world_size": tp}),
            ("sglang.srt.runtime_context", {"get_parallel": self.parallel.context,
                                            "linear_attn_tp_size": tp}),
            ("sglang.srt.utils", {"is_cpu": lambda: False, "is_hip": lambda: False,
                                  "is_npu": lambda: False}),
            # A decorator factory registering a multimodal processor (Dots3, MuseGlimmer): the
            # class unchanged (a placeholder would call the processor on the class).
            ("sglang.srt.multimodal.customized_mm_processor_utils",
             {"register_customized_processor": lambda *_a, **_k: lambda cls: cls}),
        ):  # fmt: skip
            module = StubModule(name)
            module.__path__ = []  # type: ignore[attr-defined]
            module.__dict__.update(values)
            stubs[name] = module
        stubs["sglang.srt.configs"] = self.configs = _Configs(root, self.failed)
        sys.path.insert(0, str(root))
        real = REAL + (CELL_REAL if release_cell.locate(root) is not None else ())
        finder = _Finder(root, stubs, real)
        self.cell_failures = finder.cell_failures
        sys.meta_path.insert(0, finder)
        distributed = importlib.import_module("sglang.srt.distributed")
        distributed.get_tensor_model_parallel_world_size = tp  # type: ignore[attr-defined]
        self.registry, self.registry_at = registry(root)
        self.chooser, self.chooser_at = self._chooser()

    def _namespace(self) -> dict[str, Any]:
        configs = self.configs

        class Namespace(dict):  # type: ignore[type-arg]
            def __missing__(self, key: str) -> Any:
                import builtins

                if hasattr(builtins, key):
                    return getattr(builtins, key)
                if key in configs._modules:  # type: ignore[attr-defined]
                    return getattr(configs, key)
                return Dummy(key)

        return Namespace()

    def _chooser(self) -> tuple[Any, str]:
        """R's ``mambaish_config`` as a function of the runner, or 0.5.2 / 0.5.3's
        ``is_hybrid_gdn``; with where it is."""
        hybrid_arch = self.root / "sglang/srt/configs/hybrid_arch.py"
        if _find_method(self.root, "sglang/srt/configs/hybrid_arch.py", None, "mambaish_config"):
            module = importlib.import_module("sglang.srt.configs.hybrid_arch")
            line = _find_method(self.root, str(hybrid_arch.relative_to(self.root)), None,
                                "mambaish_config").lineno  # type: ignore[union-attr]  # fmt: skip
            return (
                lambda runner: module.mambaish_config(runner.model_config),
                f"sglang/srt/configs/hybrid_arch.py:{line} (mambaish_config)",
            )
        relative = None
        for candidate in sorted((self.root / "sglang/srt").rglob("*.py")):
            text = candidate.read_text(encoding="utf-8", errors="replace")
            if "def mambaish_config" in text or "def is_hybrid_gdn" in text:
                rel = str(candidate.relative_to(self.root))
                if _find_method(self.root, rel, "ModelRunner", "mambaish_config") or (
                    _find_method(self.root, rel, "ModelRunner", "is_hybrid_gdn")
                ):
                    relative = rel
                    break
        if relative is None:
            raise LookupError("no mambaish_config / is_hybrid_gdn in R")
        tree = ast.parse((self.root / relative).read_text(encoding="utf-8"))
        runner = next(
            n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "ModelRunner"
        )
        namespace = self._namespace()
        properties: dict[str, Any] = {}
        for item in runner.body:
            if (
                isinstance(item, ast.FunctionDef)
                and (item.name.endswith("_config") or item.name == "is_hybrid_gdn")
                and any(ast.unparse(d) == "property" for d in item.decorator_list)
            ):
                function = copy.deepcopy(item)
                function.decorator_list = []
                node = ast.Module(body=[function], type_ignores=[])
                exec(compile(node, str(self.root / relative), "exec"), namespace)
                properties[item.name] = property(namespace[item.name])
        name = "mambaish_config" if "mambaish_config" in properties else "is_hybrid_gdn"
        line = _find_method(self.root, relative, "ModelRunner", name).lineno  # type: ignore[union-attr]
        self.runner_class = type("ModelRunner", (), properties)
        return (lambda runner: getattr(runner, name)), f"{relative}:{line} (ModelRunner.{name})"

    def config_class(self, model_type: str) -> tuple[type, str]:
        if model_type in self.registry:
            module, name = self.registry[model_type]
            cls = getattr(importlib.import_module(module), name)
            return cls, f"R's {name} ({module.replace('.', '/')}.py; {self.registry_at})"
        from transformers import CONFIG_MAPPING

        cls = CONFIG_MAPPING[model_type]
        return cls, f"transformers {self.transformers} {cls.__name__}"

    def answer(self, config: Mapping[str, Any], tp: int) -> dict[str, Any]:
        self.parallel.tp = tp
        model_type = config.get("model_type")
        if not isinstance(model_type, str):
            return {"no_class": "no model_type"}
        try:
            cls, how = self.config_class(model_type)
        except KeyError:
            return {"no_class": f"neither R nor transformers {self.transformers} has a class "
                    f"for {model_type!r}"}  # fmt: skip
        built = self.built = cls.from_dict(json.loads(json.dumps(config)))
        model_config = types.SimpleNamespace(
            hf_config=built, is_draft_model=False, linear_attn_registry_result=None
        )
        runner = (
            object.__new__(self.runner_class)
            if hasattr(self, "runner_class")
            else types.SimpleNamespace()
        )
        runner.__dict__.update(
            model_config=model_config, is_draft_worker=False, server_args=Dummy("server_args")
        )
        chosen = self.chooser(runner)
        out: dict[str, Any] = {"class": how, "chooser": self.chooser_at}
        attention = self.attention_check(config, tp)
        if attention is not None:
            return {**out, "refusal": attention, "at": "the model file's attention layer"}
        if chosen is True:  # 0.5.2 / 0.5.3: is_hybrid_gdn; the bytes are hf_config's
            params = built.hybrid_gdn_params
            out.update(
                per_req=int(built.mamba_cache_per_req),
                layers=len(params[-1]),
                read="hf_config.mamba_cache_per_req; len(hybrid_gdn_params[-1])",
            )
            return out
        if not chosen:
            return {**out, "not_hybrid": f"{self.chooser_at} is {chosen!r}"}
        params = chosen.mamba2_cache_params
        if params is None:
            return {**out, "not_hybrid": "mamba2_cache_params is None"}
        out.update(
            per_req=int(params.mamba_cache_per_req),
            layers=len(params.layers),
            chosen=type(chosen).__name__,
            read="mamba2_cache_params.mamba_cache_per_req; len(mamba2_cache_params.layers)",
            dtypes=f"conv {params.dtype.conv.name}, temporal {params.dtype.temporal.name}",
        )
        return out

    def attention_check(self, config: Mapping[str, Any], tp: int) -> str | None:
        """The head-split assert of the model file of R serving the architecture (the file
        whose ``EntryClass`` names it): ``assert self.total_num_heads % tp_size == 0`` (or
        ``self.num_q_heads_full % self.attn_tp_size``, ZAYA1's ``self.num_k_heads_full %
        self.tp_size``) on the text config's ``num_attention_heads`` / ``num_query_groups``,
        mirrored as the wheel oracle's ``SglangStates.attention_check`` does; ``None`` where
        the file has none or the heads split."""
        architectures = config.get("architectures") or [None]
        path = self.entry_files().get(str(architectures[0]))
        if path is None:
            return None
        text = config.get("text_config") or config
        built = getattr(self, "built", None)
        if built is not None:  # the fields as R's class holds them (ZAYA1's num_query_groups)
            holder = getattr(built, "text_config", None) or built
            text = {**text, **{k: v for k, v in vars(holder).items() if isinstance(v, int)}}
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8-sig"))):
            if not isinstance(node, ast.Assert):
                continue
            test = ast.unparse(node.test)
            name = (
                "num_attention_heads"
                if HEADS_SPLIT.fullmatch(test)
                else "num_query_groups"
                if GROUPS_SPLIT.fullmatch(test)
                else None
            )
            heads = text.get(name) if name else None
            if isinstance(heads, int) and heads > 0 and heads % tp:
                return (
                    f"AssertionError: {test} ({path.relative_to(self.root)}:{node.lineno}: "
                    f"{name} {heads}, tp {tp})"
                )
        return None

    def entry_files(self) -> dict[str, Path]:
        if not hasattr(self, "_entry_files"):
            files: dict[str, Path] = {}
            for path in sorted((self.root / "sglang/srt/models").rglob("*.py")):
                text = path.read_text(encoding="utf-8-sig", errors="replace")
                if "EntryClass" not in text:
                    continue
                for node in ast.parse(text).body:
                    if isinstance(node, ast.Assign) and any(
                        isinstance(t, ast.Name) and t.id == "EntryClass" for t in node.targets
                    ):
                        value = node.value
                        items = value.elts if isinstance(value, ast.List | ast.Tuple) else [value]
                        for item in items:
                            files.setdefault(ast.unparse(item), path)
            self._entry_files = files
        return self._entry_files

    def at(self, error: BaseException) -> str | None:
        """Where R (its tree, or the transformers it runs under) raised; ``None`` where the
        failure is this script's own (an oracle gap, never R's refusal)."""
        import transformers

        site = os.path.dirname(os.path.dirname(transformers.__file__))
        for frame in reversed(traceback.extract_tb(error.__traceback__)):
            if frame.filename.startswith(str(self.root)):
                return f"{os.path.relpath(frame.filename, self.root)}:{frame.lineno}"
            if frame.filename.startswith(os.path.join(site, "transformers")):
                return f"{os.path.relpath(frame.filename, site)}:{frame.lineno}"
        return None


def main(argv: list[str]) -> None:
    release = Release(Path(argv[0]))
    cell = release_cell.Cell(release)
    print(json.dumps({"ready": release.transformers, "chooser": release.chooser_at,
                      "cell": release_cell.describe(cell),
                      "ssm_dtype": [release.ssm_dtype, release.ssm_where],
                      "registry": release.registry_at}), flush=True)  # fmt: skip
    for line in sys.stdin:
        if not line.strip():
            continue
        job = json.loads(line)
        config = json.loads(Path(job["config"]).read_text(encoding="utf-8"))
        noise = io.StringIO()
        # The file whose EntryClass names the architecture (R's ModelRegistry imports every
        # sglang/srt/models module and keys its EntryClass by name); None: R has none.
        architecture = (config.get("architectures") or [None])[0]
        path = release.entry_files().get(str(architecture))
        entry = {"entry": None if path is None else f"{path.relative_to(release.root)}"}
        try:
            with contextlib.redirect_stdout(noise), contextlib.redirect_stderr(noise):
                answer = release.answer(config, int(job["tp"]))
        except Exception as error:
            message = " ".join(str(error).split())
            if release.at(error) is None or "Dummy" in message or "<stub" in message:
                # This script's failure, or R's code failing on a placeholder: an oracle gap.
                gap = {"oracle_gap": f"{type(error).__name__}: {message}"[:300], **entry}
                print(json.dumps(gap), flush=True)
                continue
            answer = {"refusal": f"{type(error).__name__}: {message}"[:300],
                      "at": release.at(error)}  # fmt: skip
        if "per_req" in answer:
            try:
                with contextlib.redirect_stdout(noise), contextlib.redirect_stderr(noise):
                    answer.update(cell.answer(config, int(job["tp"])))
            except Exception as error:  # R's cell code not run on this case: an oracle gap
                message = " ".join(str(error).split())
                answer["cell_gap"] = f"{type(error).__name__}: {message}"[:300]
                if getattr(cell, "spec_code", False):
                    answer["cell_spec"] = "EAGLE draft layers added under speculation: not run"
        answer.update(entry)
        if release.failed:
            answer["failed_imports"] = dict(release.failed)
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
