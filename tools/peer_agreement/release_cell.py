"""One SGLang release's own KV bytes per token (its "cell size"), run inside ``release_state.py``
(the same interpreter, R's tree, the transformers R pins).

R's own cell code, found by name (``locate``) and compiled from R's AST (tracebacks carry R's
lines), runs on an instance of R's own ``ModelConfig`` (``configs/model_config.py``, with R's
``hf_transformers_utils`` / ``utils/hf_transformers`` run from R: ``get_hf_text_config``, ...):

* 0.5.2 - 0.5.10.post1: the statements of ``ModelRunner.profile_max_num_token``
  (``model_executor/model_runner.py``, from 0.5.7 ``model_runner_kv_cache_mixin.py``) after its
  free-memory probe up to the last that assigns ``cell_size`` (the layer count: the draft test,
  R's ``mambaish_config`` / ``is_hybrid_gdn`` properties and their ``full_attention_layer_ids``,
  else ``num_effective_layers``), with R's ``get_cell_size_per_token`` from 0.5.7;
* 0.5.11 - 0.5.15.post1: ``DefaultPoolConfigurator.__init__(self, mr)`` of
  ``model_executor/pool_configurator.py`` up to ``self._cell_size = ...``, with R's
  ``_compute_cell_size``;
* 0.5.16 - 0.5.23: ``DefaultPoolConfigurator.__init__(self, kvc)`` likewise (R's
  ``configs/hybrid_arch.mambaish_config``), with R's ``_compute_cell_size``,
  ``_compute_qsa_cell_size`` (0.5.20+) and ``calculate_mla_kv_cache_dim`` (0.5.17+,
  ``mem_cache/kv_cache_configurator.py``).

What follows ``self._cell_size = ...`` (DFLASH; from 0.5.14 the EAGLE draft layers added under
speculation) is not run: there the answer carries ``cell_spec`` and a speculative case is fed
the package's cell.

Stood in for (each named in ``STAND_INS``): R's ``get_config`` answers the config
``release_state.py`` built with R's class (``from_dict`` on the fixture, as ``from_pretrained``
would read it; R's post-processing of multimodal families is not run);
``get_generation_config`` answers ``None``; the model path is an empty local folder (no
``hf_quant_config.json``); the runner's (or ``KVCacheConfigurator``'s) ``is_draft_worker`` is
``False``, ``use_mla_backend`` and ``kv_cache_dtype`` are R's statements mirrored
(``model_config.attention_arch == AttentionArch.MLA``; ``--kv-cache-dtype auto`` on a model
with no ``quant_config``: ``model_config.dtype``, which R's ``_get_and_verify_dtype``
computes), ``start_layer`` 0 and ``end_layer`` R's fallback ``max(num_hidden_layers,
num_attention_layers)`` (one pipeline stage); ``torch._utils._element_size`` is the dtype's
``itemsize``; ``get_attention_tp_size`` / ``get_parallel().attn_tp_size`` answer tp (one
attention-DP shard, no context or decode-context parallelism); ``is_float4_e2m1fn_x2`` is
false (the stand-in torch has no ``float4_e2m1fn_x2``); ``envs`` the defaults of R's
``environ.py``; no HiSparse; ``get_glm_dsa_layer_split_effective_num_layers`` and
``parse_qsa_profile`` mirrored (``_cp_and_qsa_modules``). Any other name or attribute R's cell
code reads raises, and the case is an oracle gap (never a silent default); so does a fixture
with a ``quantization_config`` or a ``loop_num``, and a release whose config helpers fail to
import here (``release_state._Tolerant``).
"""

from __future__ import annotations

import ast
import importlib
import json
import sys
import tempfile
import types
from pathlib import Path
from typing import Any

CELL_FILES = (
    "sglang/srt/model_executor/pool_configurator.py",
    "sglang/srt/model_executor/model_runner_kv_cache_mixin.py",
    "sglang/srt/model_executor/model_runner.py",
)
STAND_INS = (
    "get_config: the config built with R's class (from_dict)",
    "get_generation_config: None",
    "model path: an empty local folder",
    "is_draft_worker False",
    "use_mla_backend: model_config.attention_arch == AttentionArch.MLA (R's ModelRunner)",
    "kv_cache_dtype: model_config.dtype (R's 'auto' branch, no quant_config)",
    "start_layer 0, end_layer max(num_hidden_layers, num_attention_layers) (one PP stage)",
    "torch._utils._element_size: itemsize",
    "get_attention_tp_size / get_parallel().attn_tp_size: tp (dcp and cp 1)",
    "is_float4_e2m1fn_x2: False (no float4_e2m1fn_x2 in the stand-in torch)",
    "envs: R's environ.py defaults; enable_hisparse False",
    "get_glm_dsa_layer_split_effective_num_layers: num_layers (one CP rank, mirrored)",
    "parse_qsa_profile: None without indexer_n_heads (mirrored)",
)


class Unknown(LookupError):
    """R's cell code read something not run from R and not stood in for: an oracle gap."""


def _assigns(node: ast.AST, name: str) -> bool:
    return any(
        isinstance(sub, ast.Name) and sub.id == name and isinstance(sub.ctx, ast.Store)
        for sub in ast.walk(node)
    )


def locate(root: Path) -> tuple[ast.FunctionDef, ast.FunctionDef | None, str] | None:
    """R's cell code: ``profile_max_num_token`` that assigns ``cell_size`` (with R's
    ``get_cell_size_per_token`` of the same class), or ``DefaultPoolConfigurator.__init__(self,
    mr)`` (0.5.11 - 0.5.15.post1) or ``DefaultPoolConfigurator.__init__(self, kvc)`` (0.5.16+,
    a ``KVCacheConfigurator``) of ``pool_configurator.py`` (with its ``_compute_cell_size``);
    with its file. ``None`` where R has neither."""
    for relative in CELL_FILES:
        path = root / relative
        if not path.exists():
            continue
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if not isinstance(node, ast.ClassDef):
                continue
            methods = {m.name: m for m in node.body if isinstance(m, ast.FunctionDef)}
            profile = methods.get("profile_max_num_token")
            if profile is not None and _assigns(profile, "cell_size"):
                return profile, methods.get("get_cell_size_per_token"), relative
            init = methods.get("__init__")
            if (
                node.name == "DefaultPoolConfigurator"
                and init is not None
                and [a.arg for a in init.args.args] in (["self", "mr"], ["self", "kvc"])
                and "_compute_cell_size" in methods
            ):
                return init, methods["_compute_cell_size"], relative
    return None


class _Strict(types.SimpleNamespace):
    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise Unknown(f"R's cell code reads runner.{name}, not stood in for")


class Cell:
    """R's cell code, compiled once per release."""

    def __init__(self, release: Any) -> None:
        self.release = release
        self.found = locate(release.root)
        if self.found is None:
            return
        profile, per_token, self.relative = self.found
        self.configurator = profile.name == "__init__"
        body = profile.body
        start = 1 if _assigns(body[0], "available_gpu_memory") or _assigns(
            body[0], "post_model_load_memory"
        ) else 0  # fmt: skip
        if self.configurator:
            # DefaultPoolConfigurator.__init__: up to ``self._cell_size = ...``; what follows
            # (EAGLE draft layers from 0.5.14, DFLASH) is speculation's, not run.
            last = next(i for i, s in enumerate(body) if "self._cell_size" in ast.unparse(s))
            rest = "".join(ast.unparse(s) for s in body[last + 1 :])
            self.spec_code = "is_eagle" in rest
            ret = ast.parse("return self._cell_size, num_layers").body[0]
            self.kvc = profile.args.args[1].arg == "kvc"
            arguments = f"def f(self, {profile.args.args[1].arg}): pass"
        else:
            last = max(i for i, s in enumerate(body) if _assigns(s, "cell_size"))
            self.spec_code = False
            ret = ast.parse("return cell_size, num_layers").body[0]
            arguments = "def f(self): pass"
        statements = body[start : last + 1]
        function = ast.FunctionDef(
            name="_cell",
            args=ast.parse(arguments).body[0].args,  # type: ignore[attr-defined]
            body=[*statements, ret],
            decorator_list=[],
            returns=None,
            type_params=[],
        )
        ast.copy_location(function, profile)
        module = ast.Module(body=[function], type_ignores=[])
        self.qsa = None
        if self.configurator:
            # 0.5.20+: _compute_cell_size adds R's _compute_qsa_cell_size (a staticmethod).
            path = release.root / self.relative
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.FunctionDef) and node.name == "_compute_qsa_cell_size":
                    qsa = ast.parse(ast.unparse(node)).body[0]
                    ast.increment_lineno(qsa, node.lineno - 1)
                    qsa.decorator_list = []  # type: ignore[attr-defined]
                    module.body.append(qsa)  # type: ignore[arg-type]
                    self.qsa = node.lineno
        if per_token is not None:
            method = ast.parse(ast.unparse(per_token)).body[0]
            ast.increment_lineno(method, per_token.lineno - 1)
            method.decorator_list = []  # type: ignore[attr-defined]
            module.body.append(method)  # type: ignore[arg-type]
        ast.fix_missing_locations(module)
        self.from_configs = {
            alias.asname or alias.name: node.module
            for node in ast.walk(ast.parse((release.root / self.relative).read_text("utf-8")))
            if isinstance(node, ast.ImportFrom)
            and (node.module or "").startswith("sglang.srt.configs.")
            for alias in node.names
        }
        self.namespace = _Globals(self)
        exec(compile(module, str(release.root / self.relative), "exec"), self.namespace)
        self.mla_dim = None
        mla_file = "sglang/srt/mem_cache/kv_cache_configurator.py"
        if self.configurator and (release.root / mla_file).exists():
            # 0.5.17+: R's _compute_cell_size imports calculate_mla_kv_cache_dim from R's
            # kv_cache_configurator.py in its body: compiled from R's AST (its own file name).
            tree = ast.parse((release.root / mla_file).read_text(encoding="utf-8"))
            for node in tree.body:
                if isinstance(node, ast.FunctionDef) and node.name == "calculate_mla_kv_cache_dim":
                    exec(compile(ast.Module(body=[node], type_ignores=[]),
                                 str(release.root / mla_file), "exec"), self.namespace)  # fmt: skip
                    self.mla_dim = self.namespace["calculate_mla_kv_cache_dim"]
        if self.configurator:
            self.where = (
                f"{self.relative}:{profile.lineno} (DefaultPoolConfigurator.__init__), "
                f":{per_token.lineno} (_compute_cell_size)"  # type: ignore[union-attr]
            )
        else:
            self.where = f"{self.relative}:{profile.lineno} (ModelRunner.profile_max_num_token)"
            if per_token is not None:
                self.where += f", :{per_token.lineno} (get_cell_size_per_token)"
        self.tp = 1

    def answer(self, config: dict[str, Any], tp: int) -> dict[str, Any]:
        if self.found is None:
            return {"cell_fed": "no cell code of R's found by name: not run"}
        text = config.get("text_config") or {}
        if {"quantization_config", "loop_num"} & (set(config) | set(text)):
            raise Unknown(
                "a quantization_config or loop_num: R's kv dtype or layer count not run here"
            )
        self.tp = tp
        model_config = self.model_config()
        failures = getattr(self.release, "cell_failures", {})
        if failures:
            raise Unknown(f"R's config helpers did not import here: {failures}"[:240])
        mc = importlib.import_module("sglang.srt.configs.model_config")
        dtype = model_config.dtype
        if not hasattr(dtype, "itemsize"):
            raise Unknown(f"R's model_config.dtype is {dtype!r}, not a dtype")
        attributes = {
            "model_config": model_config,
            "is_draft_worker": False,
            "use_mla_backend": model_config.attention_arch == mc.AttentionArch.MLA,
            "kv_cache_dtype": dtype,
            "start_layer": 0,
            "end_layer": max(model_config.num_hidden_layers, model_config.num_attention_layers),
        }
        attributes["num_effective_layers"] = attributes["end_layer"]
        properties = dict(vars(getattr(self.release, "runner_class", type("R", (), {}))))
        if self.configurator and self.kvc:
            # The KVCacheConfigurator's fields the cell reads (0.5.16+), as its ModelRunner
            # fills them: the same values; the server's --kv-cache-dtype auto, no HiSparse.
            layer_info = _Strict(start_layer=0, end_layer=attributes["end_layer"],
                                 num_effective_layers=attributes["end_layer"])  # fmt: skip
            kvc = _Strict(
                model_config=model_config, kv_cache_dtype=dtype, model_dtype=dtype,
                use_mla_backend=attributes["use_mla_backend"], is_draft_worker=False,
                layer_info=layer_info, kv_cache_dtype_str="auto",
                server_args=_Strict(kv_cache_dtype="auto", enable_hisparse=False),
            )  # fmt: skip
            _cp_and_qsa_modules(self.mla_dim)
            holder = type("DefaultPoolConfigurator", (), self._methods())()
            cell, layers = self.namespace["_cell"](holder, kvc)
            return self._out(cell, layers, dtype)
        if self.configurator:
            runner = type("ModelRunner", (_Strict,), _public(properties))(**attributes)
            holder = type("DefaultPoolConfigurator", (), self._methods())()
            cell, layers = self.namespace["_cell"](holder, runner)
            return self._out(cell, layers, dtype)
        if "get_cell_size_per_token" in self.namespace:
            properties["get_cell_size_per_token"] = self.namespace["get_cell_size_per_token"]
        runner = type("ModelRunner", (_Strict,), _public(properties))(**attributes)
        cell, layers = self.namespace["_cell"](runner)
        return self._out(cell, layers, dtype)

    def _methods(self) -> dict[str, Any]:
        methods: dict[str, Any] = {"_compute_cell_size": self.namespace["_compute_cell_size"]}
        if self.qsa is not None:
            methods["_compute_qsa_cell_size"] = staticmethod(
                self.namespace["_compute_qsa_cell_size"]
            )
        return methods

    def _out(self, cell: Any, layers: Any, dtype: Any) -> dict[str, Any]:
        if not isinstance(cell, int):
            raise Unknown(f"R's cell is {cell!r}, not an int")
        out = {"cell": cell, "cell_layers": layers, "cell_dtype": dtype.name}
        if self.spec_code:
            # R adds EAGLE draft layers to the cell under speculation (not run here): R's cell
            # is its own without speculation only.
            out["cell_spec"] = "EAGLE draft layers added under speculation: not run"
        return out

    def model_config(self) -> Any:
        mc = importlib.import_module("sglang.srt.configs.model_config")
        built = self.release.built
        mc.get_config = lambda *_a, **_k: built
        mc.get_generation_config = lambda *_a, **_k: None
        with tempfile.TemporaryDirectory() as folder:
            return mc.ModelConfig(folder)


def _cp_and_qsa_modules(mla_dim: Any) -> None:
    """What R's ``_compute_cell_size`` imports in its body (0.5.16+): R's own
    ``calculate_mla_kv_cache_dim`` (0.5.17+, compiled from R's ``mem_cache/
    kv_cache_configurator.py``; its DSA branch reads ``get_disagg`` / ``get_exec``, not stood in
    for: a DSA model is an oracle gap), and two helpers mirrored:
    ``get_glm_dsa_layer_split_effective_num_layers`` returns ``num_layers`` with one
    context-parallel rank (sglang-0.5.23:sglang/srt/layers/cp/utils.py:85-89: ``shard_size =
    attn_cp_size``, ``<= 1``); ``parse_qsa_profile`` is ``None`` where the text config has no
    ``indexer_n_heads`` (sglang-0.5.23:sglang/srt/layers/attention/qsa/config.py:78-88; R's
    module needs msgspec), else unknown (an oracle gap)."""

    def parse_qsa_profile(config: Any) -> None:
        text = getattr(config, "text_config", None) or config
        if getattr(text, "indexer_n_heads", None) is not None:
            raise Unknown("a QSA indexer (indexer_n_heads): R's parse_qsa_profile not run")
        return None

    for name, values in (
        ("sglang.srt.layers.cp.utils",
         {"get_glm_dsa_layer_split_effective_num_layers": lambda _kvc, n: n}),
        ("sglang.srt.layers.attention.qsa.config", {"parse_qsa_profile": parse_qsa_profile}),
        ("sglang.srt.mem_cache.kv_cache_configurator",
         {} if mla_dim is None else {"calculate_mla_kv_cache_dim": mla_dim}),
    ):  # fmt: skip
        module = types.ModuleType(name)
        module.__dict__.update(values)
        sys.modules[name] = module


def _public(properties: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in properties.items() if not k.startswith("__")}


class _Globals(dict):  # type: ignore[type-arg]
    """The names R's cell code reads: R's own ``configs/model_config.py`` functions (those
    R's file imports from it: ``is_deepseek_nsa``, ...), the stand-ins above; anything else
    raises ``Unknown``."""

    def __init__(self, cell: Cell) -> None:
        super().__init__()
        self.cell = cell

    def __missing__(self, key: str) -> Any:
        import builtins

        if hasattr(builtins, key):
            return getattr(builtins, key)
        if key == "torch":
            torch = importlib.import_module("torch")
            torch._utils = types.SimpleNamespace(_element_size=lambda dtype: dtype.itemsize)
            return torch
        if key == "get_attention_tp_size":
            return lambda: self.cell.tp
        if key == "is_float4_e2m1fn_x2":
            return lambda dtype: False
        if key in self.cell.from_configs:  # R's own, as R's file imports it
            return getattr(importlib.import_module(self.cell.from_configs[key]), key)
        if key == "get_parallel":  # one attention-DP shard, no context / decode-context split
            return lambda: types.SimpleNamespace(attn_tp_size=self.cell.tp, attn_dcp_size=1,
                                                 attn_cp_size=1)  # fmt: skip
        if key == "envs":  # the defaults R's environ.py declares (release_state.py)
            return importlib.import_module("sglang.srt.environ").envs
        raise Unknown(f"R's cell code reads {key}, not stood in for")


def describe(cell: Cell) -> str:
    if cell.found is None:
        return "fed by the package (no cell code of R's found by name)"
    return json.dumps({"cell": cell.where, "stand_ins": len(STAND_INS)})
