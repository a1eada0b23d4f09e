"""One SGLang release's own KV bytes per token (its "cell size"), run inside ``release_state.py``
(the same interpreter, R's tree, the transformers R pins).

Where R computes the cell in ``ModelRunner.profile_max_num_token`` (``model_executor/
model_runner.py`` 0.5.2 - 0.5.6.post2, ``model_executor/model_runner_kv_cache_mixin.py`` 0.5.7 -
0.5.12.post1, with ``get_cell_size_per_token`` from 0.5.7), R's own statements run: those of
``profile_max_num_token`` after its free-memory probe up to the last one that assigns
``cell_size`` (the layer count: the draft test, R's ``mambaish_config`` / ``is_hybrid_gdn``
properties and their ``full_attention_layer_ids``, else ``num_effective_layers``), and R's
``get_cell_size_per_token`` where it has one, compiled from R's AST (tracebacks carry R's
lines), on an instance of R's own ``ModelConfig`` (``configs/model_config.py``, with R's
``hf_transformers_utils`` run from R: ``get_hf_text_config``, ``get_context_length``, ...).

Stood in for (each named in ``STAND_INS``): R's ``get_config`` answers the config
``release_state.py`` built with R's class (``from_dict`` on the fixture, as ``from_pretrained``
would read it; R's post-processing of multimodal families is not run);
``get_generation_config`` answers ``None``; the model path is an empty local folder (no
``hf_quant_config.json``); the runner's ``is_draft_worker`` is ``False``, ``use_mla_backend``
and ``kv_cache_dtype`` are R's ``ModelRunner`` statements mirrored (``model_config.attention_arch
== AttentionArch.MLA``; ``--kv-cache-dtype auto`` on a model with no ``quant_config``:
``model_config.dtype``, which R's ``_get_and_verify_dtype`` computes), ``start_layer`` 0 and
``end_layer`` R's fallback ``max(num_hidden_layers, num_attention_layers)`` (one pipeline
stage); ``torch._utils._element_size`` is the dtype's ``itemsize``; ``get_attention_tp_size``
answers tp (one attention-DP shard); ``is_float4_e2m1fn_x2`` is R's test mirrored (the stand-in
torch has no ``float4_e2m1fn_x2``, so it is false). Any other name or runner attribute R's cell
code reads raises, and the case is an oracle gap (never a silent default); so does a fixture
with a ``quantization_config`` or a ``loop_num`` (R's kv dtype or layer count then depend on
code not run here).

From 0.5.13 R sizes the cell in ``model_executor/pool_configurator.py``
(``DefaultPoolConfigurator._compute_cell_size``, with EAGLE draft layers added under
speculation): not run here; those releases are fed the package's cell (``{"cell_fed": why}``).
"""

from __future__ import annotations

import ast
import importlib
import json
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
    "get_attention_tp_size: tp",
    "is_float4_e2m1fn_x2: False (no float4_e2m1fn_x2 in the stand-in torch)",
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
    mr)`` of ``pool_configurator.py`` (with its ``_compute_cell_size``); with its file. ``None``
    where R has neither (from 0.5.16 the configurator takes a ``KVCacheConfigurator``)."""
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
                and [a.arg for a in init.args.args] == ["self", "mr"]
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
            arguments = "def f(self, mr): pass"
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
        if per_token is not None:
            method = ast.parse(ast.unparse(per_token)).body[0]
            ast.increment_lineno(method, per_token.lineno - 1)
            method.decorator_list = []  # type: ignore[attr-defined]
            module.body.append(method)  # type: ignore[arg-type]
        ast.fix_missing_locations(module)
        self.from_model_config = {
            alias.asname or alias.name
            for node in ast.walk(ast.parse((release.root / self.relative).read_text("utf-8")))
            if isinstance(node, ast.ImportFrom) and node.module == "sglang.srt.configs.model_config"
            for alias in node.names
        }
        self.namespace = _Globals(self)
        exec(compile(module, str(release.root / self.relative), "exec"), self.namespace)
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
            return {"cell_fed": "R's cell is DefaultPoolConfigurator(kvc)._compute_cell_size "
                    "(0.5.16+): not run"}  # fmt: skip
        if "quantization_config" in config or "loop_num" in (config.get("text_config") or config):
            raise Unknown("quantization_config / loop_num: R's kv dtype or layers not run here")
        self.tp = tp
        model_config = self.model_config()
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
        if self.configurator:
            runner = type("ModelRunner", (_Strict,), _public(properties))(**attributes)
            holder = type(
                "DefaultPoolConfigurator",
                (),
                {"_compute_cell_size": self.namespace["_compute_cell_size"]},
            )()
            cell, layers = self.namespace["_cell"](holder, runner)
            return self._out(cell, layers, dtype)
        if "get_cell_size_per_token" in self.namespace:
            properties["get_cell_size_per_token"] = self.namespace["get_cell_size_per_token"]
        runner = type("ModelRunner", (_Strict,), _public(properties))(**attributes)
        cell, layers = self.namespace["_cell"](runner)
        return self._out(cell, layers, dtype)

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
        mc = importlib.import_module("sglang.srt.configs.model_config")
        if key in self.cell.from_model_config:  # R's own, as R's file imports it
            return getattr(mc, key)
        raise Unknown(f"R's cell code reads {key}, not stood in for")


def describe(cell: Cell) -> str:
    if cell.found is None:
        return "fed by the package (R's DefaultPoolConfigurator(kvc), 0.5.16+, not run)"
    return json.dumps({"cell": cell.where, "stand_ins": len(STAND_INS)})
