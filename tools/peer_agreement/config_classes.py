"""The servers' own config classes, run under the transformers each server pins.

A server never reads a ``config.json`` as it is: vLLM 0.33.0 builds transformers' config class
for it (transformers >=5.16.1,<5.21.0, V:vllm-0.33.0.dist-info/METADATA) or one of its own
(``_CONFIG_REGISTRY``, V:vllm/transformers_utils/config.py:122-176, chosen by
``HFConfigParser.parse``, :343-466); SGLang 0.5.23 builds transformers' (==5.19.0,
S:sglang-0.5.23.dist-info/METADATA) through ``AutoConfig``, with its own classes registered
there and re-parsed through its ``_CONFIG_REGISTRY`` (S:sglang/srt/utils/hf_transformers/
config.py:214-300, common.py:117-330). Defaults, derived fields (``__post_init__`` /
``__init__``), attribute aliases and the classes' refusals all come from there.

This module is run as a script by an interpreter that has the pinned transformers installed
(and no torch: the servers' heavy imports are stubbed), so the oracle, whose own process stubs
transformers, gets each config as the server's class reads it:

    PY config_classes.py build SERVER WHEEL_ROOT < jobs.jsonl > answers.jsonl
    PY config_classes.py describe SERVER WHEEL_ROOT MODEL_TYPES_JSON > table.json
    PY config_classes.py defaults OUT_DIR MODEL_TYPE... > files.json

``SERVER`` is ``vllm``, ``sglang`` or ``transformers`` (transformers' own classes alone);
``WHEEL_ROOT`` the unpacked wheel (``-`` for transformers). ``build`` reads one JSON object a
line (a parsed ``config.json``) and writes, a line each, ``{"snapshot": ...}`` (the config
object's attributes, its properties' values and its sub-configs, recursively) or
``{"refusal": "Type: message", "at": "file:line"}`` (the class refused the config) or
``{"no_class": why}`` (neither transformers nor the server has a class for the model type: the
checkpoint's remote code would be run, which the oracle cannot, so it reads the file).
``describe`` writes the classes' declared defaults (``tools/config-classes`` builds the
package's tables from it). ``defaults`` writes transformers' default config of each model type.
Only the standard library and transformers are imported here.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import importlib
import importlib.abc
import importlib.machinery
import inspect
import io
import json
import math
import os
import sys
import traceback
import types
import warnings
from collections.abc import Iterator, Mapping
from typing import Any

warnings.filterwarnings("ignore")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")

# Heavy imports of the servers' config modules, none of which a config class computes with.
STUB_ROOTS = frozenset(
    {
        "torch",
        "triton",
        "flashinfer",
        "sgl_kernel",
        "xgrammar",
        "zmq",
        "uvloop",
        "cuda",
        "einops",
        "torchvision",
        "torchaudio",
        "aiohttp",
        "fastapi",
        "uvicorn",
        "pydantic_settings",
        "openai",
        "tiktoken",
        "partial_json_parser",
        "outlines",
        "llguidance",
        "decord",
        "soundfile",
        "scipy",
        "sentencepiece",
        "setproctitle",
        "prometheus_client",
        "pynvml",
        "cachetools",
        "blake3",
        "cbor2",
        "gguf",
        "compressed_tensors",
        "depyf",
        "lark",
        "mistral_common",
        "msgpack",
        "numba",
        "cv2",
        "cpuinfo",
        "ray",
        "watchfiles",
        "starlette",
        "interegular",
        "modelscope",
        "timm",
        "librosa",
        "av",
        "kernels",
        "deep_gemm",
        "deep_ep",
        "flash_attn",
        "quack",
        "cutlass",
        "nvidia",
        "tvm_ffi",
        "openai_harmony",
        "anthropic",
        "grpc",
        "IPython",
        "torch_memory_saver",
        "flash_mla",
        "mooncake",
        "nixl",
        "aiter",
        "numexpr",
        "sympy",
        "outlines_core",
        "xformers",
        "bitsandbytes",
        "peft",
        "accelerate",
        "datasets",
        "tilelang",
        "PIL",
        "jinja2",
        "dill",
    }
)


# --- a stubbed import system (the servers' packages without their __init__) -------------------


class Dummy:
    """Stands for anything a config module imports but a config class never computes with."""

    def __init__(self, name: str = "dummy") -> None:
        object.__setattr__(self, "_name", name)

    def __getattr__(self, key: str) -> Any:
        if key.startswith("__") and key.endswith("__"):
            raise AttributeError(key)
        return Dummy(f"{self._name}.{key}")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if len(args) == 1 and callable(args[0]) and not kwargs and not isinstance(args[0], Dummy):
            return args[0]  # a decorator
        return Dummy(f"{self._name}()")

    def __getitem__(self, key: Any) -> Any:
        return Dummy(f"{self._name}[]")

    def __mro_entries__(self, bases: Any) -> tuple[type, ...]:
        name = self._name.rsplit(".", 1)[-1]
        return (type(name, (), {"__init_subclass__": classmethod(lambda cls, **kw: None)}),)

    def __iter__(self) -> Iterator[Any]:
        return iter(())

    def __bool__(self) -> bool:
        return False

    def __enter__(self) -> Dummy:
        return self

    def __exit__(self, *args: Any) -> bool:
        return False

    def __repr__(self) -> str:
        return f"<stub {self._name}>"

    def __or__(self, other: Any) -> Any:
        return self

    __ror__ = __or__

    def __eq__(self, other: object) -> bool:
        return self is other

    def __hash__(self) -> int:
        return id(self)

    def __lt__(self, other: Any) -> bool:
        return False

    __gt__ = __le__ = __ge__ = __lt__

    def __int__(self) -> int:
        return 0

    def __index__(self) -> int:
        return 0

    def __float__(self) -> float:
        return 0.0


class StubModule(types.ModuleType):
    def __getattr__(self, key: str) -> Any:
        if key.startswith("__") and key.endswith("__"):
            raise AttributeError(key)
        value = Dummy(f"{self.__name__}.{key}")
        setattr(self, key, value)
        return value


class _StubLoader(importlib.abc.Loader):
    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = StubModule(spec.name)
        module.__path__ = []
        module.__version__ = "0.0.0"
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        pass


class _Finder(importlib.abc.MetaPathFinder):
    """Stubs ``STUB_ROOTS`` and ``stubbed`` modules; loads the ``bare`` packages without
    running their ``__init__``."""

    def __init__(self, bare: Mapping[str, str], stubbed: frozenset[str]) -> None:
        self.bare = bare
        self.stubbed = stubbed

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name.split(".")[0] in STUB_ROOTS or any(
            name == stub or name.startswith(stub + ".") for stub in self.stubbed
        ):
            return importlib.machinery.ModuleSpec(name, _StubLoader(), is_package=True)
        if name in self.bare:
            spec = importlib.machinery.ModuleSpec(name, None, is_package=True)
            spec.submodule_search_locations = [self.bare[name]]
            return spec
        return None


def _install(root: str, packages: list[str], stubbed: frozenset[str] = frozenset()) -> None:
    # transformers first, so that it settles is_torch_available() before torch is stubbed.
    import transformers
    import transformers.configuration_utils  # noqa: F401

    sys.path.insert(0, root)
    bare = {package: os.path.join(root, *package.split(".")) for package in packages}
    sys.meta_path.insert(0, _Finder(bare, stubbed))


# --- the classes each server reads a model type with -----------------------------------------


class Classes:
    """``resolve(model_type)``: the class ``server`` builds for a model type, and how."""

    def __init__(self, server: str, root: str | None) -> None:
        import transformers
        from transformers import CONFIG_MAPPING

        self.server = server
        self.root = root
        self.transformers = transformers.__version__
        self.mapping = CONFIG_MAPPING
        self.registry: dict[str, Any] = {}
        self.registry_at: str | None = None
        self.sites = [os.path.dirname(os.path.dirname(transformers.__file__)) + os.sep]
        if root is not None:
            self.sites.insert(0, root + os.sep)
        if server == "sglang":
            self._sglang()
        elif server == "vllm":
            self._vllm()

    def _sglang(self) -> None:
        """SGLang's config modules, imported as ``import sglang.srt.configs`` does (for their
        side effects: ``CONFIG_MAPPING._extra_content["lfm2"] = ...``, S:sglang/srt/configs/
        lfm2.py:104; ``AutoConfig.register("zaya", ...)``, zaya.py:316), and
        ``_CONFIG_REGISTRY`` (S:sglang/srt/utils/hf_transformers/common.py:117-189, read from
        the AST: the module itself imports the server) registered with ``AutoConfig`` where
        transformers has no class of the name (:275-290)."""
        assert self.root is not None
        # The parallel state (runtime_context, distributed) is read by mamba2_cache_params,
        # never by a class's defaults or derivations.
        _install(
            self.root,
            ["sglang", "sglang.srt", "sglang.srt.configs"],
            frozenset({"sglang.srt.runtime_context", "sglang.srt.distributed"}),
        )
        configs = os.path.join(self.root, "sglang", "srt", "configs")
        names: dict[str, Any] = {}
        with open(os.path.join(configs, "__init__.py"), encoding="utf-8") as handle:
            init = ast.parse(handle.read())
        for node in init.body:
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                "sglang.srt.configs."
            ):
                try:
                    module = importlib.import_module(str(node.module))
                except Exception:
                    continue
                for alias in node.names:
                    names[alias.name] = getattr(module, alias.name, None)
        common = os.path.join(self.root, "sglang", "srt", "utils", "hf_transformers", "common.py")
        with open(common, encoding="utf-8") as handle:
            tree = ast.parse(handle.read())
        for node in tree.body:
            if isinstance(node, ast.AnnAssign) and ast.unparse(node.target) == "_CONFIG_REGISTRY":
                assert isinstance(node.value, ast.DictComp)
                listed = node.value.generators[0].iter
                assert isinstance(listed, ast.List)
                for item in listed.elts:
                    cls = names.get(ast.unparse(item))
                    if cls is not None:
                        self.registry[cls.model_type] = cls
                self.registry_at = f"sglang/srt/utils/hf_transformers/common.py:{node.lineno}"
        from transformers import AutoConfig

        for model_type, cls in self.registry.items():
            with contextlib.suppress(ValueError):
                AutoConfig.register(model_type, cls)

    def _vllm(self) -> None:
        """vLLM's own config classes: ``_CONFIG_REGISTRY`` (V:vllm/transformers_utils/
        config.py:122-176) through ``_CLASS_TO_MODULE`` (V:vllm/transformers_utils/configs/
        __init__.py), both read from the AST."""
        assert self.root is not None
        _install(
            self.root,
            ["vllm", "vllm.transformers_utils", "vllm.transformers_utils.configs", "vllm.models"],
        )
        base = os.path.join(self.root, "vllm", "transformers_utils")
        modules: dict[str, str] = {}
        with open(os.path.join(base, "configs", "__init__.py"), encoding="utf-8") as handle:
            for node in ast.walk(ast.parse(handle.read())):
                if isinstance(node, ast.AnnAssign) and ast.unparse(node.target) == (
                    "_CLASS_TO_MODULE"
                ):
                    assert node.value is not None
                    modules = ast.literal_eval(node.value)
        with open(os.path.join(base, "config.py"), encoding="utf-8") as handle:
            tree = ast.parse(handle.read())
        for node in tree.body:
            if not (
                isinstance(node, ast.AnnAssign) and ast.unparse(node.target) == "_CONFIG_REGISTRY"
            ):
                continue
            assert isinstance(node.value, ast.Call)
            self.registry_at = f"vllm/transformers_utils/config.py:{node.lineno}"
            pairs: dict[str, str] = {}
            for keyword in node.value.keywords:
                if keyword.arg is None:
                    pairs.update(ast.literal_eval(keyword.value))
                else:
                    pairs[keyword.arg] = ast.literal_eval(keyword.value)
            for model_type, name in pairs.items():
                with contextlib.suppress(Exception):
                    module = importlib.import_module(modules[name])
                    self.registry[model_type] = getattr(module, name)

    def resolve(self, model_type: str) -> tuple[Any, str]:
        """The class and how it was chosen; ``(None, why)`` when there is none."""
        if model_type in self.registry:
            label = "vLLM" if self.server == "vllm" else "SGLang"
            return self.registry[model_type], f"{label} _CONFIG_REGISTRY ({self.registry_at})"
        try:
            cls = self.mapping[model_type]
        except KeyError:
            return None, (
                f"transformers {self.transformers} has no config class for {model_type!r}"
                + ("" if self.server == "transformers" else f" and {self.server} registers none")
            )
        module = getattr(cls, "__module__", "")
        how = "transformers CONFIG_MAPPING"
        if not module.startswith("transformers."):
            how += f" (replaced by {module})"
        return cls, how

    def where(self, obj: Any) -> str | None:
        """``path:line`` of a class or function, relative to its package's root."""
        try:
            path = inspect.getsourcefile(obj) or ""
            _, line = inspect.getsourcelines(obj)
        except (TypeError, OSError):
            return None
        for site in self.sites:
            if path.startswith(site):
                return f"{os.path.relpath(path, site)}:{line}"
        return f"{path}:{line}"


# --- building a config as the server builds it ------------------------------------------------


def _raw_mamba(config: Mapping[str, Any]) -> dict[str, Any] | None:
    """SGLang's ``_try_load_raw_mamba_config`` (S:sglang/srt/utils/hf_transformers/config.py:
    174-211): a state-spaces Mamba config (``d_model``, ``ssm_cfg``, no model type) as the
    ``MambaConfig`` fields it builds."""
    if config.get("model_type") or config.get("architectures"):
        return None
    if "d_model" not in config or "ssm_cfg" not in config:
        return None
    pad = config.get("pad_vocab_size_multiple", 1)
    vocab = config.get("vocab_size", 50280)
    if pad > 1:
        vocab = (vocab + pad - 1) // pad * pad
    return {
        "model_type": "mamba",
        "vocab_size": vocab,
        "hidden_size": config["d_model"],
        "num_hidden_layers": config["n_layer"],
        "state_size": (config.get("ssm_cfg") or {}).get("d_state", 16),
        "layer_norm_epsilon": config.get("layer_norm_epsilon", 1e-5),
        "residual_in_fp32": config.get("residual_in_fp32", True),
        "architectures": ["MambaForCausalLM"],
    }


def build(classes: Classes, config: Mapping[str, Any]) -> Any:
    """The config object the server builds from ``config`` (a parsed config.json); raises what
    the class raises, or ``LookupError`` when there is no class.

    SGLang (``HfModelConfigParser.parse``, S:sglang/srt/utils/hf_transformers/config.py:
    214-300): a raw state-spaces Mamba config as ``MambaConfig``; else ``AutoConfig`` (the
    class transformers registers for the model type, or the one SGLang registered or swapped
    in), whose refusal is SGLang's; then, for a model type of its ``_CONFIG_REGISTRY``, its own
    class on the same file (:281-300). vLLM (``HFConfigParser.parse``, V:vllm/
    transformers_utils/config.py:343-466): its own class where it has one, else
    ``AutoConfig``'s; then ``llm_config`` read as ``text_config`` (:790-797)."""
    given = json.loads(json.dumps(config))
    if classes.server == "sglang":
        raw = _raw_mamba(given)
        if raw is not None:
            cls, _ = classes.resolve("mamba")
            return cls(**{key: value for key, value in raw.items() if key != "model_type"})
    model_type = given.get("model_type")
    if not isinstance(model_type, str):
        raise LookupError(f"no model_type: {classes.server} cannot pick a config class")
    cls, how = classes.resolve(model_type)
    if cls is None:
        raise LookupError(how)
    if classes.server == "sglang":
        auto = classes.mapping[model_type]
        built = auto.from_dict(json.loads(json.dumps(given)))
        # SGLang does not re-parse its own Mamba classes (config.py:285-292); transformers'
        # classes of the same names it does.
        own_mamba = type(built).__module__.startswith("sglang.") and type(built).__name__ in (
            "MambaConfig",
            "Mamba2Config",
            "FalconMambaConfig",
        )
        if model_type not in classes.registry or own_mamba:
            return built
    built = cls.from_dict(given)
    if classes.server == "vllm":
        llm = getattr(built, "llm_config", None)
        if llm is not None and getattr(built, "text_config", None) is None:
            built.text_config = llm
    return built


# --- snapshots ----------------------------------------------------------------------------


def plain(value: Any, depth: int = 0) -> Any:
    """``value`` as JSON: a config object as its snapshot, floats' infinities spelled out."""
    if depth > 6:
        return "<deep>"
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return value
    if isinstance(value, list | tuple | range | set | frozenset):
        return [plain(item, depth + 1) for item in value]
    if isinstance(value, Mapping):
        return {str(key): plain(item, depth + 1) for key, item in value.items()}
    if isinstance(value, Dummy):
        # A stubbed torch dtype a class set (SGLang's GigaChat35Config: torch.bfloat16) is
        # its name, which the servers' dtype parsers read as that dtype.
        name = str(object.__getattribute__(value, "_name"))
        return name.removeprefix("torch.") if name.startswith("torch.") else f"<{name}>"
    if hasattr(value, "to_dict") and hasattr(value, "model_type"):
        return snapshot(value, depth + 1)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return plain(dataclasses.asdict(value), depth + 1)
    return f"<{type(value).__name__}: {str(value)[:80]}>"


def _properties(cls: type) -> list[str]:
    """The properties a config class and its bases below transformers' ``PreTrainedConfig``
    define."""
    names: list[str] = []
    for klass in cls.__mro__:
        if klass.__module__ == "transformers.configuration_utils" or klass is object:
            break
        for name, member in vars(klass).items():
            if isinstance(member, property) and name not in names and not name.startswith("_"):
                names.append(name)
    return names


def snapshot(config: Any, depth: int = 0) -> dict[str, Any]:
    """A config object as data: its class, its instance attributes, each property's value (or
    the error reading it raises) and its ``attribute_map`` aliases, sub-configs as
    snapshots."""
    cls = type(config)
    attrs = {str(key): plain(value, depth) for key, value in vars(config).items()}
    properties: dict[str, Any] = {}
    for name in _properties(cls):
        try:
            properties[name] = plain(getattr(config, name), depth)
        except Exception as error:
            properties[name] = {"__error__": f"{type(error).__name__}: {error}"[:300]}
    aliases = dict(getattr(cls, "attribute_map", {}) or {})
    return {
        "__class__": cls.__name__,
        "__module__": cls.__module__,
        "attrs": attrs,
        "properties": properties,
        "aliases": aliases,
    }


def _refusal(classes: Classes, error: BaseException) -> dict[str, Any]:
    frames = traceback.extract_tb(error.__traceback__)
    at = None
    for frame in reversed(frames):
        for site in classes.sites:
            if frame.filename.startswith(site):
                at = f"{os.path.relpath(frame.filename, site)}:{frame.lineno}"
                break
        if at:
            break
    message = " ".join(str(error).split())
    return {"refusal": f"{type(error).__name__}: {message}"[:600], "at": at}


def command_build(server: str, root: str | None) -> None:
    classes = Classes(server, root)
    print(json.dumps({"ready": classes.transformers}), flush=True)
    for line in sys.stdin:
        if not line.strip():
            continue
        config = json.loads(line)
        answer: dict[str, Any]
        noise = io.StringIO()
        try:
            with contextlib.redirect_stdout(noise), contextlib.redirect_stderr(noise):
                built = build(classes, config)
                answer = {"snapshot": snapshot(built)}
        except LookupError as error:
            answer = {"no_class": str(error)}
        except Exception as error:
            answer = _refusal(classes, error)
        print(json.dumps(answer), flush=True)


# --- the classes' declared defaults ---------------------------------------------------------


def _type_name(annotation: Any) -> str:
    name = getattr(annotation, "__name__", None)
    return name if isinstance(name, str) and "[" not in str(annotation) else str(annotation)


def _declared(cls: type, field: str, aliased: bool = True) -> dict[str, Any]:
    """How ``cls`` declares ``field``: an ``attribute_map`` alias (with the field it aliases'
    declaration), a property, a dataclass field or an ``__init__`` parameter (the nearest class
    in the MRO that declares it), with its default; for a field ``@strict`` validates on
    assignment (transformers 5's ``__validators__``), its type (``strict``); or not
    declared."""
    aliases = getattr(cls, "attribute_map", {}) or {}
    if field in aliases and aliased:
        target = _declared(cls, aliases[field], aliased=False)
        if target["kind"] == "undeclared":
            # Declared under its own name, stored under the alias's (BailingHybridConfig's
            # max_position_embeddings -> model_max_length).
            target = _declared(cls, field, aliased=False)
        return {**target, "kind": "alias", "of": aliases[field], "target": target["kind"]}
    for klass in cls.__mro__:
        if isinstance(vars(klass).get(field), property):
            return {"kind": "property"}
    for klass in cls.__mro__:
        init = vars(klass).get("__init__")
        if init is None or "__wrapped__" in getattr(init, "__dict__", {}):
            continue
        if klass.__module__ == "transformers.configuration_utils":
            break
        try:
            parameters = inspect.signature(init).parameters
        except (TypeError, ValueError):
            break
        if field in parameters:
            default = parameters[field].default
            if default is inspect.Parameter.empty:
                return {"kind": "init", "required": True}
            return {"kind": "init", "default": plain(default)}
        # An __init__ that passes **kwargs on lets its base declare the field.
        if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
            break
    if dataclasses.is_dataclass(cls):
        for item in dataclasses.fields(cls):
            if item.name != field:
                continue
            entry: dict[str, Any] = {"kind": "field"}
            if item.default is not dataclasses.MISSING:
                entry["default"] = plain(item.default)
            elif item.default_factory is not dataclasses.MISSING:
                entry["default"] = plain(item.default_factory())
            else:
                entry["required"] = True
            if field in (getattr(cls, "__validators__", None) or {}):
                entry["strict"] = _type_name(item.type)
            return entry
    return {"kind": "undeclared"}


def _text(classes: Classes, cls: type, key: str, given: Mapping[str, Any]) -> str:
    """The model type of the text config ``cls`` builds from ``given``, or its refusal."""
    noise = io.StringIO()
    try:
        with contextlib.redirect_stdout(noise), contextlib.redirect_stderr(noise):
            built = cls.from_dict({"model_type": cls.model_type, **given})
    except Exception as error:
        return "refused: " + _refusal(classes, error)["refusal"]
    text = getattr(built, key, None)
    if text is None:
        return "none"
    if isinstance(text, Mapping):
        return "dict"
    return str(getattr(text, "model_type", "?"))


def _untyped(classes: Classes, cls: type, key: str) -> str:
    """``_text`` of a text config without a ``model_type``; where the class refuses a wrapper
    without a vision config (NemotronH VL: ``vision_config must be a dictionary``), with an
    empty one, which is what the probe is not about."""
    answer = _text(classes, cls, key, {key: {"num_hidden_layers": 4}})
    if answer.startswith("refused") and "vision_config" in answer:
        answer = _text(classes, cls, key, {key: {"num_hidden_layers": 4}, "vision_config": {}})
    return answer


def describe(classes: Classes, model_type: str, fields: list[str], text: str | None) -> Any:
    cls, how = classes.resolve(model_type)
    if cls is None:
        return {"class": None, "why": how}
    entry: dict[str, Any] = {
        "class": cls.__name__,
        "resolved_by": how,
        "defined_at": classes.where(cls),
    }
    for hook in ("__post_init__", "__init__"):
        if hook in vars(cls):
            entry["rules_at"] = classes.where(vars(cls)[hook])
            break
    # An alias whose value is stored under a field read here is read too: a file may give
    # either name, and a class may declare the default under the alias's (BailingHybridConfig's
    # num_mtp_layers -> num_nextn_predict_layers).
    aliases = getattr(cls, "attribute_map", {}) or {}
    stored_under = sorted(
        key for key, into in aliases.items() if into in fields and key not in fields
    )
    entry["fields"] = {field: _declared(cls, field) for field in [*fields, *stored_under]}
    if text is not None:
        entry["text"] = {
            "key": text,
            "absent": _text(classes, cls, text, {}),
            "untyped": _untyped(classes, cls, text),
        }
    return entry


def command_describe(server: str, root: str | None, wanted: str) -> None:
    classes = Classes(server, root)
    request = json.loads(wanted)
    out = {
        "transformers": classes.transformers,
        "registry_at": classes.registry_at,
        "classes": {
            model_type: describe(classes, model_type, item["fields"], item.get("text"))
            for model_type, item in sorted(request.items())
        },
    }
    print(json.dumps(out, indent=1, sort_keys=True))


# --- transformers' default config of a model type ------------------------------------------


# transformers names bailing_hybrid's model BailingHybridForCausalLM, which neither peer serves;
# both serve bailing_hybrid configs as BailingMoeV2_5ForCausalLM (lightning) and
# BailingMoeV3ForCausalLM (KDA): V:vllm/model_executor/models/registry.py:81-82.
PEER_ARCHITECTURES: dict[str, tuple[str, ...]] = {
    "bailing_hybrid": ("BailingMoeV2_5ForCausalLM", "BailingMoeV3ForCausalLM"),
}
# Properties that to_dict leaves out but a peer reads off the config object: NemotronHConfig's
# hybrid_override_pattern (V:vllm/model_executor/models/nemotron_h.py:292).
READ_PROPERTIES: dict[str, tuple[str, ...]] = {"nemotron_h": ("hybrid_override_pattern",)}


def _model_names(*names: str) -> list[dict[str, str]]:
    """transformers' model class names by model type, read from ``modeling_auto.py``'s
    source (importing it needs torch)."""
    import transformers

    path = os.path.join(
        os.path.dirname(transformers.__file__), "models", "auto", "modeling_auto.py"
    )
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read())
    found: dict[str, dict[str, str]] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            if name in names and isinstance(node.value, ast.Call) and node.value.args:
                found[name] = dict(ast.literal_eval(node.value.args[0]))
    return [found.get(name, {}) for name in names]


def command_defaults(out_dir: str, model_types: list[str]) -> None:
    import transformers
    from transformers import AutoConfig

    tables = _model_names(
        "MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES", "MODEL_FOR_CAUSAL_LM_MAPPING_NAMES"
    )
    os.makedirs(out_dir, exist_ok=True)
    files: list[str] = []
    skipped: list[str] = []
    for model_type in model_types:
        try:
            config = AutoConfig.for_model(model_type)
        except (ValueError, KeyError):
            skipped.append(model_type)
            continue
        mapping: dict[str, Any] = config.to_dict()
        for name in READ_PROPERTIES.get(model_type, ()):
            mapping[name] = getattr(config, name)
        names = [table[model_type] for table in tables if model_type in table]
        for architecture in PEER_ARCHITECTURES.get(model_type, tuple(names[:1])):
            mapping["architectures"] = [architecture]
            suffix = f"-{architecture}" if model_type in PEER_ARCHITECTURES else ""
            name = f"{model_type}{suffix}.transformers-{transformers.__version__}.json"
            path = os.path.join(out_dir, name)
            with open(path, "w", encoding="utf-8") as handle:
                json.dump(mapping, handle, indent=1, default=str)
            files.append(path)
    print(json.dumps({"files": files, "skipped": skipped}))


def main(argv: list[str]) -> None:
    command, *rest = argv
    if command == "build":
        server, root = rest
        command_build(server, None if root == "-" else root)
    elif command == "describe":
        server, root, wanted = rest
        command_describe(server, None if root == "-" else root, wanted)
    elif command == "defaults":
        command_defaults(rest[0], rest[1:])
    else:
        raise SystemExit(f"unknown command {command!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
