"""Per-sequence recurrent state as vLLM 0.33.0 and SGLang 0.5.23 compute it, from their wheels.

``VllmStates`` and ``SglangStates`` are context managers (each installs its server's runtime,
``wheels.py``) with one method, ``state(config, tp=..., spec=..., ...)``, that returns a
``PeerState``: per kind of recurrent layer, the layer indices and every state tensor's shape,
dtype and bytes, or the refusal that the peer's own code raises.

vLLM (V: paths are inside the vllm-0.33.0 wheel)
    * The architecture (``config["architectures"][0]``) picks the model class through the
      registry's own tables (V:vllm/model_executor/models/registry.py:73-840, read from the
      AST); a removed one is refused with the version from ``_PREVIOUSLY_SUPPORTED_MODELS``
      (:841-895). ``vllm.models.X`` packages are resolved as their ``__init__`` does on CUDA
      (its last ``else`` branch).
    * The config: vLLM's own class where ``_CONFIG_REGISTRY`` names one
      (V:vllm/transformers_utils/config.py:122-190, e.g. ``KimiLinearConfig``), run whole;
      otherwise the config.json mapping as attributes (transformers' derived attributes are
      *not* applied; see ``ConfigView``).
    * The model dtype: V:vllm/config/model.py ``_get_and_verify_dtype`` with ``dtype="auto"``
      and ``ModelArchConfigConvertorBase.get_torch_dtype``, run on an SM90 platform stub
      (``supported_dtypes`` bfloat16, float16, float32: V:vllm/platforms/cuda.py:257-266).
    * The dtype hook: ``MODELS_CONFIG_MAP[architecture].verify_and_update_config``
      (V:vllm/model_executor/models/config.py:812-848, :953-990) where that class touches
      ``mamba_ssm_cache_dtype`` (NemotronH, its VL wrapper, Qwen3.5).
    * The model's own ``get_mamba_state_shape_from_config`` / ``get_mamba_state_dtype_from_config``
      classmethods, AST-extracted from the model file and run.
    * The **layer that allocates**: its class (and its bases up to ``MambaBase``) AST-extracted
      with ``__init__``, ``get_state_shape`` and ``get_state_dtype``, constructed with the
      arguments the model passes (mirrored here, each with its citation) and asked for its
      shapes and dtypes. Its ``__init__`` runs for real, so its own checks (heads divisible by
      tp, ...) refuse as the server does. Where the model-level shapes differ from the layer's,
      the layer decides and a note says so.
    * The recurrent layers: each family's rule, run from the wheel where it is a function or a
      config method (``is_linear_layer``, ``_is_kda_layer``, ``KimiLinearConfig.is_kda_layer``,
      the ``ALL_DECODER_LAYER_TYPES`` tables) and mirrored otherwise, cited in ``layer_rule``.
    * The attention-side TP check (``total_num_attention_heads % tp``,
      V:vllm/config/model.py:1557-1563) is mirrored and reported apart, as
      ``attention_refusal``.

SGLang (S: paths are inside the sglang-0.5.23 wheel)
    * The config class: ``_CONFIG_REGISTRY`` (S:sglang/srt/utils/hf_transformers/common.py:117-
      198, read from the AST) by ``model_type``; SGLang's own class is run whole with a
      ``PretrainedConfig`` stub, so its defaults, properties and wrappers apply. A model type
      SGLang has no class for, or an architecture no ``EntryClass`` of S:sglang/srt/models/
      serves, is refused naming SGLang 0.5.23.
    * ``mambaish_config`` (S:sglang/srt/configs/hybrid_arch.py:145-155, run whole) picks the
      config whose ``mamba2_cache_params`` (run) give the shapes, dtypes and layers.
    * ``--mamba-ssm-dtype`` is the environment override ``SGLANG_MAMBA_SSM_DTYPE``.
"""

from __future__ import annotations

import ast
import copy
import functools
import inspect
import linecache
import re
import textwrap
import types
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from . import class_probe
from .class_probe import ConfigRefusal, attribute_view, rebuild
from .peer_state import PeerGroup, PeerState, PeerTensor, refusal_text, tensor
from .sglang_tree import class_model_type, class_modules, self_registered
from .wheels import (
    Extracted,
    Parallel,
    PeerRuntime,
    PretrainedConfig,
    Stub,
    StubModule,
    Wheels,
    exec_partial,
    extract_class,
    find_class,
    names_table,
    sglang_runtime,
    vllm_distributed,
    vllm_runtime,
)

__all__ = ["SglangStates", "VllmStates"]

VLLM = "vLLM 0.33.0"
SGLANG = "SGLang 0.5.23"

# Names of the tensors of each kind, in the servers' order (the state contract's names).
TENSOR_NAMES = {
    "mamba1": ("conv", "ssm"),
    "mamba2": ("conv", "ssm"),
    "gated_delta_net": ("conv", "recurrent"),
    "kda": ("conv", "recurrent"),
    "short_conv": ("conv",),
    "linear_attention": ("recurrent",),
}


def _names(kind: str, count: int) -> tuple[str, ...]:
    base = TENSOR_NAMES[kind]
    if count == len(base):
        return base
    return tuple(f"state{index}" for index in range(count))


# --- configs as the servers' code reads them ----------------------------------------------------

SUB_CONFIGS = ("text_config", "llm_config", "language_config", "vision_config")


def config_view(mapping: Mapping[str, Any]) -> Any:
    """A config.json mapping as attributes, the way vLLM receives a transformers config for a
    model type vLLM has no class of its own for: sub-config mappings become configs, as
    transformers' composite classes make them. Transformers' derived attributes and defaults
    are not applied: a field the checkpoint lacks is an ``AttributeError`` (the fixtures'
    ``to_dict()`` copies carry transformers' values)."""
    fields = {
        key: config_view(value) if key in SUB_CONFIGS and isinstance(value, Mapping) else value
        for key, value in mapping.items()
    }
    if fields.get("model_type") == "zamba2" and fields.get("attention_head_dim") is None:
        # transformers 5.23 Zamba2Config.__init__: 2 * hidden_size // num_attention_heads.
        hidden, heads = fields.get("hidden_size"), fields.get("num_attention_heads")
        if isinstance(hidden, int) and isinstance(heads, int) and heads:
            fields["attention_head_dim"] = 2 * hidden // heads
    for key in ("layer_types", "mtp_layer_types"):
        # transformers 5.23 PreTrainedConfig.__post_init__ -> remap_legacy_layer_types
        # (configuration_utils.py _LEGACY_LAYER_TYPE_REMAP), mirrored.
        if isinstance(fields.get(key), list):
            fields[key] = [LEGACY_LAYER_TYPES.get(item, item) for item in fields[key]]
    return PretrainedConfig(**copy.deepcopy(fields))


LEGACY_LAYER_TYPES = {
    "mamba": "linear_attention",
    "attention": "full_attention",
    "deepseek_sparse_attention": "indexed_attention",
    "qwen_sparse_attention": "indexed_attention",
}


# --- vLLM ------------------------------------------------------------------------------------


class Permissive:
    """A namespace whose unset attributes are ``Stub`` (for the parts of vLLM's config objects
    that sizing code touches but does not compute with)."""

    def __init__(self, **fields: Any) -> None:
        self.__dict__.update(fields)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return Stub()


class ModuleStandIn:
    """The root of an extracted layer class: ``torch.nn.Module``'s methods and attributes as
    no-ops (``register_buffer``, sub-modules), so that the layer's ``__init__`` runs. What the
    layer sets itself is a plain attribute."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return Stub()


class GpuPlatform:
    """vLLM's ``current_platform`` on one CUDA GPU: ``arch`` "sm90" (H100/H200), "sm100",
    "sm120" or "sm80". ``is_*``/``has_*`` methods answer for that GPU; any other ``is_*`` is
    False. CUDA runtime 13 is assumed (it decides FlashInfer GDN prefill on SM10x/12x,
    V:vllm/model_executor/layers/mamba/gdn/qwen_gdn_linear_attn.py:148-270)."""

    device_name = "cuda"
    device_type = "cuda"

    def __init__(self, arch: str = "sm90") -> None:
        self.arch = arch

    @property
    def capability(self) -> int:
        return int(self.arch.removeprefix("sm"))

    def is_cuda(self) -> bool:
        return True

    def is_cuda_alike(self) -> bool:
        return True

    def is_device_capability(self, capability: int) -> bool:
        return self.capability == capability

    def is_device_capability_family(self, capability: int) -> bool:
        return self.capability // 10 == capability // 10

    def has_device_capability(self, capability: int) -> bool:
        return self.capability >= capability

    def get_cuda_runtime_major(self) -> int:
        return 13

    def get_device_capability(self, device_id: int = 0) -> Any:
        """vLLM's ``DeviceCapability`` (V:vllm/platforms/interface.py): major and minor."""
        major, minor = divmod(self.capability, 10)
        return types.SimpleNamespace(major=major, minor=minor, to_int=lambda: self.capability)

    def __getattr__(self, name: str) -> Any:
        if name.startswith(("is_", "has_")):
            return lambda *args, **kwargs: False
        if name.startswith("__"):
            raise AttributeError(name)
        return Stub()


class FakeVllmConfig(Permissive):
    model_config: Any
    scheduler_config: Any
    additional_config: Any
    recurrent_layers: tuple[int, ...]
    """The parts of ``VllmConfig`` the state code reads: ``model_config`` (``hf_config``,
    ``hf_text_config``, ``dtype``), ``cache_config`` (the mamba flags), ``parallel_config``,
    ``speculative_config`` and ``num_speculative_tokens`` (V:vllm/config/vllm.py:612-623), and
    ``with_hf_config`` (:964-990, the wrappers' way to size their text model)."""

    def with_hf_config(self, hf_config: Any, architectures: Any = None) -> FakeVllmConfig:
        clone = copy.copy(self)
        clone.model_config = copy.copy(self.model_config)
        clone.model_config.hf_config = hf_config
        clone.model_config.hf_text_config = self._text_config_of(hf_config)
        return clone

    _text_config_of: Any


@dataclass
class VllmSetup:
    """What ``VllmStates.state`` built, for the reservations: the fake ``VllmConfig``, the
    model class's extracted classmethods, the layer instance (``None`` if it could not be
    built), its spec, the recurrent layer indices and the config the layers read."""

    vc: Any
    model_cls: Any
    layer: Any
    layer_spec: VllmLayer
    layers: tuple[int, ...]
    layer_config: Any
    notes: list[str]


@dataclass(frozen=True)
class VllmLayer:
    """The layer class a vLLM model allocates its state with, and how the model builds it.

    ``where``/``name``: the class as the model file refers to it (resolved through the file's
    imports). ``args(config, vllm_config)`` are the constructor's arguments as the model passes
    them (mirrored; ``args_cite`` cites the call). ``layers(config, helpers)`` returns the
    recurrent layer indices (``layers_cite``). ``adapt`` (file, function): the wheel's own
    function the model passes the config through before the layer gets it, run from the
    wheel."""

    kind: str
    where: str
    name: str
    args: Callable[[Any, Any], dict[str, Any]]
    args_cite: str
    layers: Callable[[Any, Helpers], list[int]]
    layers_cite: str
    adapt: tuple[str, str] | None = None


@dataclass(frozen=True)
class VllmModel:
    """One vLLM model class with recurrent state: where its classmethods are (``file``,
    ``cls``), the names they reference (``extra``: name -> registry key of another entry),
    the top-level functions of ``file`` they call, and the layer. ``text`` says the layer is
    built from ``hf_text_config`` (a wrapper's text model) rather than ``hf_config``."""

    family: str
    file: str
    cls: str
    layer: VllmLayer
    text: bool = False
    extra: tuple[tuple[str, str], ...] = ()
    functions: tuple[str, ...] = ()


class Helpers:
    """Wheel functions the layer rules call, extracted on demand from the vLLM wheel."""

    def __init__(self, runtime: PeerRuntime, root: Path) -> None:
        self.runtime = runtime
        self.root = root

    @functools.cache  # noqa: B019 -- one Helpers per runtime, which lives for the run
    def function(self, file: str, name: str) -> Callable[..., Any]:
        """The top-level function ``name`` of ``file``, executed from the wheel's AST with the
        file's imports (``wheels.exec_partial``)."""
        path = self.root / file
        package = file.rsplit("/", 1)[0].replace("/", ".")
        namespace: dict[str, Any] = {
            "__name__": f"peer_extract.{path.stem}",
            "__package__": package,
        }
        exec_partial(path, (name,), namespace)
        function: Callable[..., Any] = namespace[name]
        return function

    @functools.cache  # noqa: B019
    def decoder_types(self, file: str) -> dict[str, str]:
        """``ALL_DECODER_LAYER_TYPES`` of ``file``: layer-type key -> decoder class name."""
        return names_table(self.root / file, "ALL_DECODER_LAYER_TYPES")


def _mamba_layers_by_table(file: str, attribute: str) -> Callable[[Any, Helpers], list[int]]:
    """Layers whose ``config.<attribute>[i]`` maps, in ``ALL_DECODER_LAYER_TYPES``, to a
    decoder class with "Mamba" in its name."""

    def layers(config: Any, helpers: Helpers) -> list[int]:
        table = helpers.decoder_types(file)
        entries = getattr(config, attribute)
        return [i for i, entry in enumerate(entries) if "Mamba" in table[entry]]

    return layers


def _all_layers(config: Any, helpers: Helpers) -> list[int]:
    return list(range(config.num_hidden_layers))


def _linear_attention_layers(config: Any, helpers: Helpers) -> list[int]:
    return [i for i, kind in enumerate(_layer_types(config)) if kind == "linear_attention"]


def _layer_types(config: Any) -> list[str]:
    """``config.layer_types``; for a checkpoint without it, transformers' own default for the
    Qwen3-Next family: full attention every ``full_attention_interval`` layers
    (transformers 5.23 ``Qwen3NextConfig.__init__``), mirrored."""
    given = getattr(config, "layer_types", None)
    if given is not None:
        return list(given)
    interval = config.full_attention_interval
    return [
        "full_attention" if (i + 1) % interval == 0 else "linear_attention"
        for i in range(config.num_hidden_layers)
    ]


def _short_conv_layers(config: Any, helpers: Helpers) -> list[int]:
    # V:lfm2.py:433-437 / lfm2_moe.py:431-435: a layer is attention iff its layer_types entry is
    # "full_attention", a ShortConv layer otherwise.
    return [i for i, kind in enumerate(config.layer_types) if kind != "full_attention"]


def _jamba_layers(config: Any, helpers: Helpers) -> list[int]:
    # V:jamba.py:293-322 reads config.layers_block_type; for a checkpoint that does not carry it,
    # transformers' JambaConfig.layers_block_type property (attention iff i % period == offset).
    table = helpers.decoder_types("vllm/model_executor/models/jamba.py")
    given = getattr(config, "layers_block_type", None)
    if given is None:
        period, offset = config.attn_layer_period, config.attn_layer_offset
        given = [
            "attention" if i % period == offset else "mamba"
            for i in range(config.num_hidden_layers)
        ]
    return [i for i, entry in enumerate(given) if "Mamba" in table[entry]]


def _nemotron_layers(config: Any, helpers: Helpers) -> list[int]:
    table = helpers.decoder_types("vllm/model_executor/models/nemotron_h.py")
    return [i for i, char in enumerate(config.hybrid_override_pattern) if "Mamba" in table[char]]


def _zamba2_layers(config: Any, helpers: Helpers) -> list[int]:
    # V:zamba2.py:751-780: every entry of layers_block_type holds a Mamba2 mixer ("hybrid" ones
    # wrap it with the shared attention block).
    return list(range(len(config.layers_block_type)))


def _kimi_layers(config: Any, helpers: Helpers) -> list[int]:
    return [i for i in range(config.num_hidden_layers) if config.is_kda_layer(i)]


def _bailing_linear_layers(config: Any, helpers: Helpers) -> list[int]:
    is_linear = helpers.function(
        "vllm/model_executor/models/bailing_moe_linear.py", "is_linear_layer"
    )
    return [i for i in range(config.num_hidden_layers) if is_linear(i, config.layer_group_size)]


def _bailing_kda_layers(config: Any, helpers: Helpers) -> list[int]:
    is_kda = helpers.function("vllm/model_executor/models/bailing_moe_v3.py", "_is_kda_layer")
    return [
        i
        for i in range(config.num_hidden_layers)
        if is_kda(i, config.layer_group_size, config.num_hidden_layers)
    ]


def _glm5_layers(config: Any, helpers: Helpers) -> list[int]:
    is_kda = helpers.function("vllm/models/glm5next/common/model.py", "_is_kda_layer")
    return [i for i in range(config.num_hidden_layers) if is_kda(config, i)]


def _common(vc: Any) -> dict[str, Any]:
    return {"model_config": vc.model_config, "cache_config": vc.cache_config, "prefix": "layer"}


def _gdn_args(config: Any, vc: Any) -> dict[str, Any]:
    return {"config": config, "vllm_config": vc, "prefix": "model.layers.0.linear_attn"}


_MAMBA_MIXER = "vllm/model_executor/layers/mamba/mamba_mixer.py"
_MAMBA_MIXER2 = "vllm/model_executor/layers/mamba/mamba_mixer2.py"
_MODELS = "vllm/model_executor/models"

MAMBA1_LAYER = VllmLayer(
    "mamba1",
    _MAMBA_MIXER,
    "MambaMixer",
    lambda c, vc: {
        "hidden_size": c.hidden_size,
        "ssm_state_size": c.state_size,
        "conv_kernel_size": c.conv_kernel,
        "intermediate_size": c.intermediate_size,
        "time_step_rank": c.time_step_rank,
        "use_conv_bias": c.use_conv_bias,
        "use_bias": c.use_bias,
        "use_rms_norm": False,
        **_common(vc),
    },
    "V:vllm/model_executor/models/mamba.py:63-75",
    _all_layers,
    "every layer (V:vllm/model_executor/models/mamba.py, make_layers(num_hidden_layers))",
)
JAMBA_LAYER = VllmLayer(
    "mamba1",
    _MAMBA_MIXER,
    "MambaMixer",
    lambda c, vc: {
        "hidden_size": c.hidden_size,
        "ssm_state_size": c.mamba_d_state,
        "conv_kernel_size": c.mamba_d_conv,
        "intermediate_size": c.mamba_expand * c.hidden_size,
        "time_step_rank": c.mamba_dt_rank,
        "use_conv_bias": c.mamba_conv_bias,
        "use_bias": c.mamba_proj_bias,
        "use_rms_norm": True,
        **_common(vc),
    },
    "V:vllm/model_executor/models/jamba.py:127-140",
    _jamba_layers,
    "layers_block_type entries whose ALL_DECODER_LAYER_TYPES class is a Mamba layer "
    "(V:vllm/model_executor/models/jamba.py:293-322; transformers' period/offset rule when absent)",
)


def _mixer2(
    intermediate: Callable[[Any], int],
    groups: str,
    heads: str,
    head_dim: Callable[[Any], int],
    state: str,
    kernel: str,
) -> Callable[[Any, Any], dict[str, Any]]:
    def args(c: Any, vc: Any) -> dict[str, Any]:
        return {
            "hidden_size": c.hidden_size,
            "ssm_state_size": getattr(c, state),
            "conv_kernel_size": getattr(c, kernel),
            "intermediate_size": intermediate(c),
            "use_conv_bias": True,
            "use_bias": False,
            "n_groups": getattr(c, groups),
            "num_heads": getattr(c, heads),
            "head_dim": head_dim(c),
            **_common(vc),
        }

    return args


def _falcon_d_ssm(c: Any) -> int:
    # V:falcon_h1.py:112-116
    return int(c.mamba_expand * c.hidden_size) if c.mamba_d_ssm is None else c.mamba_d_ssm


VLLM_MODELS: dict[tuple[str, str], VllmModel] = {}


def _register(key: tuple[str, str], model: VllmModel) -> None:
    VLLM_MODELS[key] = model


_register(
    (f"{_MODELS}/mamba.py", "MambaForCausalLM"),
    VllmModel("mamba", f"{_MODELS}/mamba.py", "MambaForCausalLM", MAMBA1_LAYER),
)
_register(
    (f"{_MODELS}/jamba.py", "JambaForCausalLM"),
    VllmModel("jamba", f"{_MODELS}/jamba.py", "JambaForCausalLM", JAMBA_LAYER),
)
_register(
    (f"{_MODELS}/mamba2.py", "Mamba2ForCausalLM"),
    VllmModel(
        "mamba2",
        f"{_MODELS}/mamba2.py",
        "Mamba2ForCausalLM",
        VllmLayer(
            "mamba2",
            _MAMBA_MIXER2,
            "MambaMixer2",
            _mixer2(
                lambda c: getattr(c, "intermediate_size", c.expand * c.hidden_size),
                "n_groups",
                "num_heads",
                lambda c: c.head_dim,
                "state_size",
                "conv_kernel",
            ),
            "V:vllm/model_executor/models/mamba2.py:57-75",
            _all_layers,
            "every layer (V:vllm/model_executor/models/mamba2.py)",
        ),
    ),
)
NEMOTRON_LAYER = VllmLayer(
    "mamba2",
    _MAMBA_MIXER2,
    "MambaMixer2",
    _mixer2(
        lambda c: c.mamba_num_heads * c.mamba_head_dim,
        "n_groups",
        "mamba_num_heads",
        lambda c: c.mamba_head_dim,
        "ssm_state_size",
        "conv_kernel",
    ),
    "V:vllm/model_executor/models/nemotron_h.py:390-405",
    _nemotron_layers,
    "hybrid_override_pattern characters whose ALL_DECODER_LAYER_TYPES class is a Mamba layer "
    "(V:vllm/model_executor/models/nemotron_h.py:548-614)",
)
_register(
    (f"{_MODELS}/nemotron_h.py", "NemotronHForCausalLM"),
    VllmModel("nemotron_h", f"{_MODELS}/nemotron_h.py", "NemotronHForCausalLM", NEMOTRON_LAYER),
)
_register(
    (f"{_MODELS}/nano_nemotron_vl.py", "NemotronH_Nano_VL_V2"),
    VllmModel(
        "nemotron_h",
        f"{_MODELS}/nano_nemotron_vl.py",
        "NemotronH_Nano_VL_V2",
        NEMOTRON_LAYER,
        text=True,
        extra=(("NemotronHForCausalLM", f"{_MODELS}/nemotron_h.py:NemotronHForCausalLM"),),
    ),
)
_register(
    (f"{_MODELS}/falcon_h1.py", "FalconH1ForCausalLM"),
    VllmModel(
        "falcon_h1",
        f"{_MODELS}/falcon_h1.py",
        "FalconH1ForCausalLM",
        VllmLayer(
            "mamba2",
            _MAMBA_MIXER2,
            "MambaMixer2",
            _mixer2(
                _falcon_d_ssm,
                "mamba_n_groups",
                "mamba_n_heads",
                lambda c: c.mamba_d_head,
                "mamba_d_state",
                "mamba_d_conv",
            ),
            "V:vllm/model_executor/models/falcon_h1.py:112-130",
            _all_layers,
            "every layer holds a Mamba2 mixer beside attention (V:falcon_h1.py)",
        ),
    ),
)
_register(
    (f"{_MODELS}/granitemoehybrid.py", "GraniteMoeHybridForCausalLM"),
    VllmModel(
        "granitemoehybrid",
        f"{_MODELS}/granitemoehybrid.py",
        "GraniteMoeHybridForCausalLM",
        VllmLayer(
            "mamba2",
            _MAMBA_MIXER2,
            "MambaMixer2",
            _mixer2(
                lambda c: c.mamba_expand * c.hidden_size,
                "mamba_n_groups",
                "mamba_n_heads",
                lambda c: c.mamba_d_head,
                "mamba_d_state",
                "mamba_d_conv",
            ),
            "V:vllm/model_executor/models/granitemoehybrid.py:72-85",
            _mamba_layers_by_table(f"{_MODELS}/granitemoehybrid.py", "layer_types"),
            "layer_types entries whose ALL_DECODER_LAYER_TYPES class is a Mamba layer "
            "(V:vllm/model_executor/models/granitemoehybrid.py:321-350)",
        ),
    ),
)
_register(
    (f"{_MODELS}/zamba2.py", "Zamba2ForCausalLM"),
    VllmModel(
        "zamba2",
        f"{_MODELS}/zamba2.py",
        "Zamba2ForCausalLM",
        VllmLayer(
            "mamba2",
            _MAMBA_MIXER2,
            "MambaMixer2",
            _mixer2(
                lambda c: c.mamba_expand * c.hidden_size,
                "mamba_ngroups",
                "n_mamba_heads",
                lambda c: c.mamba_expand * c.hidden_size // c.n_mamba_heads,
                "mamba_d_state",
                "mamba_d_conv",
            ),
            "V:vllm/model_executor/models/zamba2.py:530-550",
            _zamba2_layers,
            "every layers_block_type entry (V:vllm/model_executor/models/zamba2.py:751-780)",
        ),
    ),
)
QWEN_GDN = VllmLayer(
    "gated_delta_net",
    "vllm/model_executor/layers/mamba/gdn/qwen_gdn_linear_attn.py",
    "QwenGatedDeltaNetAttention",
    _gdn_args,
    "V:vllm/model_executor/models/qwen3_next.py:500-507 (config, vllm_config)",
    _linear_attention_layers,
    "layer_types entries 'linear_attention' of hf_text_config (V:qwen3_next.py:668, "
    "qwen3_5.py:259; transformers' full_attention_interval default when absent)",
)
_register(
    (f"{_MODELS}/qwen3_next.py", "Qwen3NextForCausalLM"),
    VllmModel(
        "qwen3_next", f"{_MODELS}/qwen3_next.py", "Qwen3NextForCausalLM", QWEN_GDN, text=True
    ),
)
for _cls in ("Qwen3_5ForCausalLM", "Qwen3_5MoeForCausalLM"):
    _register(
        (f"{_MODELS}/qwen3_5.py", _cls),
        VllmModel(
            "qwen3_5", f"{_MODELS}/qwen3_5.py", "Qwen3_5ForCausalLMBase", QWEN_GDN, text=True
        ),
    )
for _cls in ("Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForConditionalGeneration"):
    _register(
        (f"{_MODELS}/qwen3_5.py", _cls),
        VllmModel(
            "qwen3_5",
            f"{_MODELS}/qwen3_5.py",
            "Qwen3_5ForConditionalGeneration",
            QWEN_GDN,
            text=True,
        ),
    )
# InternS2-Preview and InternS2-Mobius subclass Qwen3.5-MoE's model (V:vllm/model_executor/models/
# interns2_preview.py:32, interns2_mobius.py:467), with Qwen's gated delta net (:195).
for _file, _cls in (
    ("interns2_preview", "InternS2PreviewForConditionalGeneration"),
    ("interns2_mobius", "InternS2MobiusForConditionalGeneration"),
):
    _register(
        (f"{_MODELS}/{_file}.py", _cls),
        VllmModel(
            "qwen3_5",
            f"{_MODELS}/qwen3_5.py",
            "Qwen3_5ForConditionalGeneration",
            QWEN_GDN,
            text=True,
        ),
    )
# MiniCPM-V 4.7 and MiniCPM-OCR subclass MiniCPM-V 4.6's model (V:vllm/model_executor/models/
# minicpmv4_7.py:124, minicpm_ocr.py:409), which sizes the state.
for _file, _cls in (
    ("minicpmv4_6", "MiniCPMV4_6ForConditionalGeneration"),
    ("minicpmv4_6", "MiniCPMV4_7ForConditionalGeneration"),
    ("minicpmv4_7", "MiniCPMV4_7ForConditionalGeneration"),
    ("minicpm_ocr", "MiniCPMOcrForConditionalGeneration"),
):
    _register(
        (f"{_MODELS}/{_file}.py", _cls),
        VllmModel(
            "minicpmv4_6",
            f"{_MODELS}/minicpmv4_6.py",
            "MiniCPMV4_6ForConditionalGeneration",
            QWEN_GDN,
            text=True,
        ),
    )
_register(
    (f"{_MODELS}/olmo_hybrid.py", "OlmoHybridForCausalLM"),
    VllmModel(
        "olmo_hybrid",
        f"{_MODELS}/olmo_hybrid.py",
        "OlmoHybridForCausalLM",
        VllmLayer(
            "gated_delta_net",
            "vllm/model_executor/layers/mamba/gdn/olmo_gdn_linear_attn.py",
            "OlmoHybridGatedDeltaNetAttention",
            _gdn_args,
            "V:vllm/model_executor/models/olmo_hybrid.py:236-240 (config, vllm_config)",
            _linear_attention_layers,
            "layer_types entries 'linear_attention' (V:olmo_hybrid.py:232-236)",
        ),
    ),
)


def _short_conv(dim: str, file: str, cite: str) -> VllmLayer:
    return VllmLayer(
        "short_conv",
        "vllm/model_executor/layers/mamba/short_conv.py",
        "ShortConv",
        lambda c, vc: {"config": c, "dim": getattr(c, dim), "layer_idx": 0, **_common(vc)},
        cite,
        _short_conv_layers,
        f"layer_types entries other than 'full_attention' ({file})",
    )


LFM2_LAYER = _short_conv(
    "conv_dim", "V:lfm2.py:433-437", "V:vllm/model_executor/models/lfm2.py:354-361"
)
LFM2_MOE_LAYER = _short_conv(
    "hidden_size", "V:lfm2_moe.py:431-435", "V:vllm/model_executor/models/lfm2_moe.py:343-350"
)
_register(
    (f"{_MODELS}/lfm2.py", "Lfm2ForCausalLM"),
    VllmModel("lfm2", f"{_MODELS}/lfm2.py", "Lfm2ForCausalLM", LFM2_LAYER),
)
_register(
    (f"{_MODELS}/lfm2_moe.py", "Lfm2MoeForCausalLM"),
    VllmModel("lfm2_moe", f"{_MODELS}/lfm2_moe.py", "Lfm2MoeForCausalLM", LFM2_MOE_LAYER),
)
_register(
    (f"{_MODELS}/lfm2_vl.py", "Lfm2VLForConditionalGeneration"),
    VllmModel(
        "lfm2_vl",
        f"{_MODELS}/lfm2_vl.py",
        "Lfm2VLForConditionalGeneration",
        LFM2_LAYER,  # replaced by the text model's layer in _text_layer
        text=True,
    ),
)
KIMI_NVIDIA = "vllm/models/kimi_k3/nvidia/model.py"
KIMI_LAYER = VllmLayer(
    "kda",
    KIMI_NVIDIA,
    "KimiLinearGatedDeltaNetAttention",
    _gdn_args,
    "V:vllm/models/kimi_k3/nvidia/model.py:715-733 (KimiK3DeltaAttention when "
    "linear_attn_config.use_full_rank_gate, else KimiGatedDeltaNetAttention)",
    _kimi_layers,
    "KimiLinearConfig.is_kda_layer (V:vllm/transformers_utils/configs/kimi_linear.py:147-165)",
)
KIMI_K3_LAYER = VllmLayer(
    "kda",
    KIMI_NVIDIA,
    "KimiK3DeltaAttention",
    _gdn_args,
    KIMI_LAYER.args_cite,
    _kimi_layers,
    KIMI_LAYER.layers_cite,
)
_register(
    (KIMI_NVIDIA, "KimiLinearForCausalLM"),
    VllmModel("kimi_linear", KIMI_NVIDIA, "KimiLinearForCausalLM", KIMI_LAYER),
)
_register(
    (KIMI_NVIDIA, "KimiK3ForConditionalGeneration"),
    VllmModel(
        "kimi_linear",
        KIMI_NVIDIA,
        "KimiK3ForConditionalGeneration",
        KIMI_LAYER,
        text=True,
        extra=(("KimiLinearForCausalLM", f"{KIMI_NVIDIA}:KimiLinearForCausalLM"),),
    ),
)
_register(
    (f"{_MODELS}/bailing_moe_linear.py", "BailingMoeV25ForCausalLM"),
    VllmModel(
        "bailing_hybrid",
        f"{_MODELS}/bailing_moe_linear.py",
        "BailingMoeV25ForCausalLM",
        VllmLayer(
            "linear_attention",
            f"{_MODELS}/bailing_moe_linear.py",
            "BailingMoELinearAttention",
            lambda c, vc: {"config": c, "vllm_config": vc, "prefix": "model.layers.0.attention"},
            "V:vllm/model_executor/models/bailing_moe_linear.py:365-372",
            _bailing_linear_layers,
            "is_linear_layer(i, layer_group_size) (V:bailing_moe_linear.py:68-72, :628)",
        ),
    ),
)
_register(
    (f"{_MODELS}/bailing_moe_v3.py", "BailingMoeV3ForCausalLM"),
    VllmModel(
        "bailing_hybrid",
        f"{_MODELS}/bailing_moe_v3.py",
        "BailingMoeV3ForCausalLM",
        VllmLayer(
            "kda",
            f"{_MODELS}/bailing_moe_v3.py",
            "BailingMoeV3KimiDeltaAttention",
            lambda c, vc: {
                "config": c,
                "model_config": vc.model_config,
                "cache_config": vc.cache_config,
                "num_speculative_tokens": vc.num_speculative_tokens,
                "prefix": "model.layers.0.attention",
            },
            "V:vllm/model_executor/models/bailing_moe_v3.py:1243-1260 (num_speculative_tokens "
            "from the decoder layer's argument, vllm_config.num_speculative_tokens)",
            _bailing_kda_layers,
            "_is_kda_layer(i, layer_group_size, num_hidden_layers) (V:bailing_moe_v3.py:131-137)",
        ),
        functions=("_get_kda_state_shape_for_config",),
    ),
)
_register(
    (f"{_MODELS}/alice_ai.py", "AliceAIForCausalLM"),
    VllmModel(
        "alice_ai",
        f"{_MODELS}/alice_ai.py",
        "AliceAIForCausalLM",
        VllmLayer(
            "kda",
            f"{_MODELS}/alice_ai.py",
            "KimiGatedDeltaNetAttention",
            _gdn_args,
            "V:vllm/model_executor/models/alice_ai.py:334-339 "
            "(config=_make_kimi_kda_config(config), run from the wheel)",
            _linear_attention_layers,
            "layer_types entries 'linear_attention' (V:alice_ai.py:334, :494)",
            adapt=(f"{_MODELS}/alice_ai.py", "_make_kimi_kda_config"),
        ),
    ),
)
GLM5 = "vllm/models/glm5next/common/model.py"
for _cls in ("Glm5NextForCausalLM", "Glm5NextForConditionalGeneration"):
    _register(
        (GLM5, _cls),
        VllmModel(
            "glm5_next",
            GLM5,
            # The wrapper's classmethods only delegate to the text model's, through a
            # function-level import the loader would serve a placeholder for
            # (V:vllm/models/glm5next/common/model.py:1167-1187): the text model's run.
            "Glm5NextForCausalLM",
            VllmLayer(
                "kda",
                "vllm/models/glm5next/common/kda.py",
                "Glm5NextLinearAttention",
                _gdn_args,
                "V:vllm/models/glm5next/common/model.py:381-390 (config, vllm_config)",
                _glm5_layers,
                "_is_kda_layer(config, i) (V:vllm/models/glm5next/common/model.py:141-148)",
            ),
            text=_cls.endswith("Generation"),
        ),
    )


def _ast_literal_dicts(path: Path, names: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Top-level ``NAME = {...}`` dicts of ``path`` (string keys; a literal value as itself,
    any other as its source text), for each of ``names`` the file has."""
    found: dict[str, dict[str, Any]] = {}
    for name in names:
        try:
            table = names_table(path, name)
        except LookupError:
            continue
        found[name] = {key: _literal_or_text(text) for key, text in table.items()}
    return found


def _literal_or_text(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


VLLM_REGISTRY_TABLES = (
    "_TEXT_GENERATION_MODELS",
    "_EMBEDDING_MODELS",
    "_LATE_INTERACTION_MODELS",
    "_REWARD_MODELS",
    "_TOKEN_CLASSIFICATION_MODELS",
    "_SEQUENCE_CLASSIFICATION_MODELS",
    "_MULTIMODAL_MODELS",
)


_VLLM_DTYPE_FUNCTIONS = (
    "_STR_DTYPE_TO_TORCH_DTYPE",
    "_FLOAT16_NOT_SUPPORTED_MODELS",
    "_is_valid_dtype",
    "_check_valid_dtype",
    "_resolve_auto_dtype",
    "_get_and_verify_dtype",
)


class VllmStates:
    """vLLM 0.33.0's per-sequence state, from its wheel (see the module docstring)."""

    def __init__(self, wheels: Wheels, *, gpu_arch: str = "sm90") -> None:
        self.wheels = wheels
        self.root = wheels.vllm
        self.platform = GpuPlatform(gpu_arch)
        self.last: VllmSetup | None = None
        self.parallel = Parallel()
        self.runtime = vllm_runtime(wheels, self.parallel)
        self.current: FakeVllmConfig | None = None
        registry = _ast_literal_dicts(
            self.root / "vllm/model_executor/models/registry.py",
            (*VLLM_REGISTRY_TABLES, "_PREVIOUSLY_SUPPORTED_MODELS"),
        )
        self.architectures: dict[str, tuple[str, str]] = {}
        for table in VLLM_REGISTRY_TABLES:
            self.architectures.update(registry.get(table, {}))
        self.removed: dict[str, Any] = registry.get("_PREVIOUSLY_SUPPORTED_MODELS", {})
        self._extracted: dict[str, Extracted] = {}

    @functools.cache  # noqa: B019 -- one VllmStates per run
    def attention_free(self, arch: str) -> bool:
        """Whether the class registered for ``arch`` is ``IsAttentionFree`` (read from its
        bases in the wheel's AST: V:vllm/model_executor/models/interfaces.py:963-986, what
        ``ModelConfig.attn_type`` reads through ``_model_info``)."""
        entry = self.architectures.get(arch)
        if entry is None:
            return False
        path = self.root / _vllm_module_file(self.root, entry[0])
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ClassDef) and node.name == entry[1]:
                return any(ast.unparse(base) == "IsAttentionFree" for base in node.bases)
        return False

    def __enter__(self) -> VllmStates:
        self.runtime.__enter__()
        config_module = StubModule("vllm.config", self.runtime.touched)
        config_module.__path__ = [str(self.root / "vllm/config")]
        config_module.get_current_vllm_config = lambda: self.current  # type: ignore[attr-defined]
        config_module.get_current_vllm_config_or_none = lambda: self.current  # type: ignore[attr-defined]
        self.runtime.stubs["vllm.config"] = config_module
        self.runtime.partial["vllm.config.model"] = (None, _VLLM_DTYPE_FUNCTIONS)
        # The KDA layers' checkpoint alignment (FlashKDA: 16, else None): read, not stubbed, so
        # a Triton prefill exports no checkpoint block (V:vllm/model_executor/layers/mamba/
        # kda_checkpoint.py:9-10).
        self.runtime.partial["vllm.model_executor.layers.mamba.kda_checkpoint"] = (
            None,
            ("kda_prefill_checkpoint_alignment",),
        )
        vllm_distributed(self.runtime, self.parallel)
        self.runtime.import_module("vllm.model_executor.layers.mamba.mamba_utils")
        self.torch = self.runtime.torch
        self._setup_dtype()
        return self

    def __exit__(self, *exc: object) -> None:
        self.runtime.__exit__(*exc)

    # -- pieces of vLLM, extracted once ---------------------------------------------------------

    def _setup_dtype(self) -> None:
        """vLLM's ``--dtype auto`` (V:vllm/config/model.py:2384-2515) on an SM90 platform stub."""
        runtime = self.runtime
        platform = Permissive(
            supported_dtypes=[self.torch.bfloat16, self.torch.float16, self.torch.float32],
            is_cpu=lambda: False,
            get_device_name=lambda: "NVIDIA H100 80GB HBM3",
            get_device_capability=lambda: None,
        )
        model: Any = runtime.import_module("vllm.config.model")
        convertor = extract_class(
            runtime,
            self.root / "vllm/transformers_utils/model_arch_config_convertor.py",
            "ModelArchConfigConvertorBase",
            ["get_torch_dtype"],
            extra={"get_safetensors_params_metadata": lambda *a, **k: {}},
        )
        model.current_platform = platform
        model.ModelArchConfigConvertorBase = convertor.cls
        self._verify_dtype = model._get_and_verify_dtype
        text = self._helpers.function("vllm/transformers_utils/config.py", "get_hf_text_config")
        self._hf_text_config = text
        FakeVllmConfig._text_config_of = staticmethod(text)

    def _resolve(self, file: str, name: str) -> tuple[str, str]:
        """Where class ``name``, as ``file`` refers to it, is defined (following its imports)."""
        path = self.root / file
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and node.name == name:
                return file, name
        for found in ast.walk(tree):
            if isinstance(found, ast.ImportFrom) and found.module:
                node = found
                for alias in node.names:
                    if (alias.asname or alias.name) == name:
                        if node.level:
                            base = Path(file).parent
                            for _ in range(node.level - 1):
                                base = base.parent
                            module = str(base / str(node.module).replace(".", "/"))
                        else:
                            module = str(node.module).replace(".", "/")
                        target = f"{module}.py"
                        if not (self.root / target).is_file():
                            target = f"{module}/__init__.py"
                        return self._resolve(target, alias.name)
        raise LookupError(f"{file}: cannot find class {name}")

    def _layer_chain(self, file: str, name: str) -> list[tuple[str, str]]:
        """The class and its bases up to ``MambaBase``, base first, as (file, class)."""
        file, name = self._resolve(file, name)
        if name == "MambaBase":
            return [(file, name)]
        for base in find_class(self.root / file, name).bases:
            base_name = ast.unparse(base)
            if base_name in ("PluggableLayer", "CustomOp", "nn.Module"):
                continue
            try:
                chain = self._layer_chain(file, base_name)
            except LookupError:
                continue
            if chain[0][1] == "MambaBase":
                return [*chain, (file, name)]
        raise LookupError(f"{file}: {name} does not derive from MambaBase")

    def _layer_class(self, layer: VllmLayer) -> tuple[Any, list[str]]:
        chain = self._layer_chain(layer.where, layer.name)
        cls: type | None = None
        cites: list[str] = []
        for file, name in chain:
            key = f"{file}:{name}"
            if key not in self._extracted:
                # Every method: the ones asked for call helpers of their own class.
                defined = [
                    item.name
                    for item in find_class(self.root / file, name).body
                    if isinstance(item, ast.FunctionDef)
                ]
                self._extracted[key] = extract_class(
                    self.runtime,
                    self.root / file,
                    name,
                    defined,
                    extra={"current_platform": self.platform},
                    bases=(cls,) if cls is not None else (ModuleStandIn,),
                )
            extracted = self._extracted[key]
            cls = extracted.cls
            cites.extend(
                extracted.cite(method)
                for method in ("get_state_shape", "get_state_dtype")
                if method in extracted.lines
            )
        assert cls is not None
        return cls, cites

    def _model_class(self, model: VllmModel) -> Extracted:
        key = f"{model.file}:{model.cls}"
        if key not in self._extracted:
            extra: dict[str, Any] = {}
            for name, other in model.extra:
                other_file, other_cls = other.split(":")
                extra[name] = self._model_class(VLLM_MODELS[(other_file, other_cls)]).cls
            for function in model.functions:
                extra[function] = self._helpers.function(model.file, function)
            self._extracted[key] = extract_class(
                self.runtime,
                self.root / model.file,
                model.cls,
                ["get_mamba_state_shape_from_config", "get_mamba_state_dtype_from_config"],
                extra=extra,
            )
        return self._extracted[key]

    @functools.cached_property
    def _helpers(self) -> Helpers:
        return Helpers(self.runtime, self.root)

    @functools.cached_property
    def _dtype_hooks(self) -> dict[str, Any]:
        """``MODELS_CONFIG_MAP`` entries whose ``verify_and_update_config`` sets the mamba cache
        dtypes (V:vllm/model_executor/models/config.py:1200-1270), extracted."""
        path = self.root / "vllm/model_executor/models/config.py"
        tree = ast.parse(path.read_text(encoding="utf-8"))
        classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
        touching = {
            name for name, node in classes.items() if "mamba_ssm_cache_dtype" in ast.unparse(node)
        }
        table: dict[str, str] = {}
        for node in tree.body:
            if (
                isinstance(node, ast.Assign | ast.AnnAssign)
                and isinstance(
                    node.targets[0] if isinstance(node, ast.Assign) else node.target, ast.Name
                )
                and ast.unparse(node.targets[0] if isinstance(node, ast.Assign) else node.target)
                == "MODELS_CONFIG_MAP"
                and isinstance(node.value, ast.Dict)
            ):
                for key, value in zip(node.value.keys, node.value.values, strict=True):
                    if key is not None and ast.unparse(value) in touching:
                        table[ast.literal_eval(key)] = ast.unparse(value)
        extracted: dict[str, Any] = {}
        namespace_extra: dict[str, Any] = {}
        for name in sorted(touching, key=lambda n: classes[n].lineno):
            methods = [
                item.name
                for item in classes[name].body
                if isinstance(item, ast.FunctionDef)
                and item.name in ("verify_and_update_config", "update_mamba_ssm_cache_dtype")
            ]
            done = extract_class(self.runtime, path, name, methods, extra=namespace_extra)
            namespace_extra[name] = done.cls
            extracted[name] = done
        return {arch: extracted[cls] for arch, cls in table.items()}

    # -- the answer ---------------------------------------------------------------------------

    def _hf_config(self, mapping: Mapping[str, Any]) -> Any:
        """The config object vLLM builds: its own class where ``_CONFIG_REGISTRY`` has one,
        else transformers'. With the classes' snapshots (``--transformers``), what the class
        built under the transformers vLLM pins (a refusal of the class is vLLM's); without a
        class (the checkpoint's own code would run), or without snapshots, the file."""
        snapshots = class_probe.active()
        if snapshots is not None:
            answer = snapshots.answer("vllm", mapping)
            if "refusal" in answer:
                raise ConfigRefusal(f"{answer['refusal']} (config class, {answer.get('at')})")
            if "snapshot" in answer:
                return rebuild(answer["snapshot"], self._object)
        model_type = mapping.get("model_type")
        own = _ast_kwargs(self.root / "vllm/transformers_utils/config.py", "_CONFIG_REGISTRY")
        lazy = _ast_literal_dicts(
            self.root / "vllm/transformers_utils/configs/__init__.py", ("_CLASS_TO_MODULE",)
        ).get("_CLASS_TO_MODULE", {})
        if isinstance(model_type, str) and model_type in own and own[model_type] in lazy:
            module = lazy[own[model_type]]
            self.runtime.real.add(module)
            cls = getattr(self.runtime.import_module(module), own[model_type])
            return cls(**copy.deepcopy(dict(mapping)))
        return config_view(mapping)

    def _object(self, snapshot: Mapping[str, Any]) -> Any:
        """A config object from its snapshot: vLLM's own class, run from the wheel over the
        snapshot's attributes; transformers' as attributes (its properties' values too)."""
        module, name = str(snapshot["__module__"]), str(snapshot["__class__"])
        if module.startswith("vllm."):
            self.runtime.real.add(module)
            cls = getattr(self.runtime.import_module(module), name)
            made = object.__new__(cls)
            made.__dict__.update(rebuild(dict(snapshot["attrs"]), self._object))
            _base_properties(made)
            return made
        return PretrainedConfig(**rebuild(attribute_view(snapshot), self._object))

    def state(
        self,
        mapping: Mapping[str, Any],
        *,
        tp: int = 1,
        spec: int = 0,
        mamba_cache_dtype: str = "auto",
        mamba_ssm_cache_dtype: str = "auto",
        prepare: Callable[[FakeVllmConfig], None] | None = None,
    ) -> PeerState:
        """vLLM's state for ``mapping`` (a parsed config.json) at ``tp`` ranks and ``spec``
        speculative tokens, with ``--mamba-cache-dtype`` / ``--mamba-ssm-cache-dtype``.
        ``prepare(vllm_config)`` runs after the dtype hook and before the layer is built (the
        reservations set the cache flags there); ``self.last`` then holds what was built."""
        self.last = None
        family = family_of(mapping)
        base: dict[str, Any] = {"server": "vllm", "family": family, "tp": tp, "spec": spec}
        architectures = mapping.get("architectures") or []
        arch = architectures[0] if architectures else None
        if arch not in self.architectures:
            if arch in self.removed:
                version = self.removed[arch]
                return PeerState(
                    **base,
                    refusal=f"Removed: vLLM removed {arch} in version {version}",
                    ran=("V:vllm/model_executor/models/registry.py:841-895",),
                )
            return PeerState(**base, refusal=f"Unsupported: {VLLM} has no architecture {arch!a}")
        module, cls_name = self.architectures[arch]
        file = _vllm_module_file(self.root, module)
        try:
            file, cls_name = self._resolve(file, cls_name)
        except LookupError as error:
            return PeerState(**base, refusal=refusal_text(error))
        model = VLLM_MODELS.get((file, cls_name))
        if model is None:
            return PeerState(
                **base,
                refusal=None,
                layer_rule=f"{arch} ({file}:{cls_name}) is not modelled by the oracle",
                notes=("not modelled: no recurrent state assumed",),
            )
        self.parallel.tp = tp
        try:
            return self._state(
                model, mapping, arch, base, mamba_cache_dtype, mamba_ssm_cache_dtype, prepare
            )
        except Exception as error:
            return _failed(base, error)

    def _state(
        self,
        model: VllmModel,
        mapping: Mapping[str, Any],
        arch: str,
        base: dict[str, Any],
        mamba_cache_dtype: str,
        mamba_ssm_cache_dtype: str,
        prepare: Callable[[FakeVllmConfig], None] | None = None,
    ) -> PeerState:
        torch = self.torch
        tp, spec = base["tp"], base["spec"]
        hf_config = self._hf_config(mapping)
        text_config = self._hf_text_config(hf_config)
        model_dtype = self._verify_dtype("model", hf_config, "auto", is_pooling_model=False)
        cache = Permissive(
            mamba_cache_dtype=mamba_cache_dtype,
            mamba_ssm_cache_dtype=mamba_ssm_cache_dtype,
            use_replayssm=False,
            replayssm_buffer_len=16,
            mamba_block_size=None,
            mamba_page_size_padded=None,
            mamba_cache_mode="none",
            cache_dtype="auto",
            prefix_match_unit=None,
            kv_cache_dtype_skip_layers=None,
        )
        vc = FakeVllmConfig(
            model_config=Permissive(
                hf_config=hf_config, hf_text_config=text_config, dtype=model_dtype, use_mla=False
            ),
            cache_config=cache,
            parallel_config=Permissive(
                tensor_parallel_size=tp,
                pipeline_parallel_size=1,
                data_parallel_size=1,
                decode_context_parallel_size=1,
                prefill_context_parallel_size=1,
            ),
            speculative_config=Permissive(num_speculative_tokens=spec) if spec else None,
            num_speculative_tokens=spec,
            quant_config=None,
            compilation_config=Permissive(static_forward_context={}),
        )
        self.current = vc
        notes: list[str] = []
        ran: list[str] = []
        hook = self._dtype_hooks.get(arch)
        dtype_rule = (
            f"model dtype {model_dtype.name} (--dtype auto, V:vllm/config/model.py:2423-2515)"
        )
        if hook is not None:
            hook.cls.verify_and_update_config(vc)
            ran.append(hook.cite("verify_and_update_config"))
            dtype_rule += (
                f"; {hook.cls.__name__}.verify_and_update_config set mamba_ssm_cache_dtype "
                f"{cache.mamba_ssm_cache_dtype!a}"
            )
        extracted = self._model_class(model)
        model_shapes = tuple(
            tuple(shape) for shape in extracted.cls.get_mamba_state_shape_from_config(vc)
        )
        model_dtypes = tuple(extracted.cls.get_mamba_state_dtype_from_config(vc))
        ran += [
            extracted.cite("get_mamba_state_shape_from_config"),
            extracted.cite("get_mamba_state_dtype_from_config"),
        ]
        layer_config = text_config if model.text else hf_config
        layer_spec = self._text_layer(model, layer_config)
        layers = layer_spec.layers(layer_config, self._helpers)
        vc.recurrent_layers = tuple(layers)
        vc.model_config.is_attention_free = self.attention_free(arch)
        if prepare is not None:
            prepare(vc)
        layer: Any = None
        attention = _vllm_attention_check(text_config, tp)
        shapes, dtypes = model_shapes, model_dtypes
        if layers:
            try:
                layer_cls, cites = self._layer_class(layer_spec)
                layer = object.__new__(layer_cls)
                try:
                    initialise: Any = layer_cls.__init__
                    given = layer_config
                    if layer_spec.adapt is not None:
                        given = self._helpers.function(*layer_spec.adapt)(layer_config)
                    initialise(layer, **layer_spec.args(given, vc))
                except (AssertionError, ValueError, ZeroDivisionError) as error:
                    if is_peer_refusal(error):
                        raise
                    notes.append(
                        f"layer {layer_spec.name}.__init__ stopped at {refusal_text(error)}; "
                        "get_state_shape ran on the attributes it had set"
                    )
                except Exception as error:
                    # Past the layer's own checks, __init__ builds kernels and buffers the fake
                    # torch cannot; what get_state_shape reads is set by then, or it fails below.
                    notes.append(
                        f"layer {layer_spec.name}.__init__ stopped at {refusal_text(error)}; "
                        "get_state_shape ran on the attributes it had set"
                    )
                layer_shapes = tuple(tuple(shape) for shape in layer.get_state_shape())
                layer_dtypes = tuple(layer.get_state_dtype())
                _check_computed(layer_shapes, layer_dtypes)
            except (AssertionError, ValueError, ZeroDivisionError) as error:
                if not is_peer_refusal(error):
                    raise
                return PeerState(
                    **base,
                    refusal=refusal_text(error),
                    attention_refusal=attention,
                    layer_rule=layer_spec.layers_cite,
                    ran=(*ran, f"{layer_spec.name}.__init__ ({layer_spec.args_cite})"),
                )
            except Exception as error:  # the layer could not be built here: say so
                layer = None
                notes.append(
                    f"layer {layer_spec.name} not run ({refusal_text(error)}); "
                    "the model-level shapes are reported"
                )
            else:
                ran += [f"{layer_spec.name}.__init__ ({layer_spec.args_cite})", *cites]
                if (layer_shapes, layer_dtypes) != (model_shapes, model_dtypes):
                    notes.append(
                        f"model-level {model.cls}.get_mamba_state_shape_from_config says "
                        f"{_show_shapes(model_shapes, model_dtypes)}, the layer "
                        f"{layer_spec.name} allocates {_show_shapes(layer_shapes, layer_dtypes)}: "
                        "the layer decides"
                    )
                shapes, dtypes = layer_shapes, layer_dtypes
        names = _names(layer_spec.kind, len(shapes))
        tensors = tuple(
            tensor(name, shape, dtype.name, dtype.itemsize)
            for name, shape, dtype in zip(names, shapes, dtypes, strict=True)
        )
        groups = (PeerGroup(layer_spec.kind, tuple(layers), tensors),) if layers else ()
        del torch
        self.last = VllmSetup(
            vc=vc,
            model_cls=extracted.cls,
            layer=layer,
            layer_spec=layer_spec,
            layers=tuple(layers),
            layer_config=layer_config,
            notes=notes,
        )
        return PeerState(
            **base,
            groups=groups,
            attention_refusal=attention,
            layer_rule=layer_spec.layers_cite,
            dtype_rule=dtype_rule,
            ran=tuple(ran),
            notes=tuple(notes),
        )

    def _text_layer(self, model: VllmModel, config: Any) -> VllmLayer:
        """The layer of a wrapper's text model where it depends on the text config."""
        if model.family == "lfm2_vl":
            # V:lfm2_vl.py:713-718 builds the text model from text_config.architectures.
            arch = (getattr(config, "architectures", None) or ["Lfm2ForCausalLM"])[0]
            return LFM2_MOE_LAYER if "Moe" in arch else LFM2_LAYER
        if model.layer is KIMI_LAYER:
            kda = getattr(config, "linear_attn_config", None) or {}
            if kda.get("use_full_rank_gate", False):
                return KIMI_K3_LAYER
        return model.layer


def _ast_kwargs(path: Path, name: str) -> dict[str, str]:
    """``NAME = Call(key="value", ...)`` keyword arguments of ``path`` as a dict."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        target = (
            node.target
            if isinstance(node, ast.AnnAssign)
            else node.targets[0]
            if isinstance(node, ast.Assign)
            else None
        )
        value = getattr(node, "value", None)
        if isinstance(target, ast.Name) and target.id == name and isinstance(value, ast.Call):
            return {
                kw.arg: ast.literal_eval(kw.value)
                for kw in value.keywords
                if kw.arg is not None and isinstance(kw.value, ast.Constant)
            }
    raise LookupError(f"{path}: no {name}")


def _base_properties(made: Any) -> None:
    """What transformers' ``PreTrainedConfig`` answers through a property of its own, which
    the stubbed base lacks: ``rope_scaling`` is ``rope_parameters`` (transformers 5
    configuration_utils.py, ``PreTrainedConfig.rope_scaling``)."""
    if "rope_scaling" not in made.__dict__:
        made.__dict__["rope_scaling"] = made.__dict__.get("rope_parameters")


def _vllm_module_file(root: Path, module: str) -> str:
    """The file a registry entry's module names; ``vllm.models.X`` as its ``__init__`` picks on
    CUDA (the last ``else`` branch of its platform dispatch)."""
    if not module.startswith("vllm."):
        return f"vllm/model_executor/models/{module}.py"
    package = module.replace(".", "/")
    init = root / package / "__init__.py"
    if not init.is_file():
        return f"{package}.py"
    return f"{package}/__init__.py"


def _vllm_attention_check(text_config: Any, tp: int) -> str | None:
    """vLLM's ``verify_with_parallel_config`` refusal for the attention heads
    (V:vllm/config/model.py:1557-1563), mirrored; heads from the text config as
    ``model_arch_config.total_num_attention_heads`` reads them."""
    heads = getattr(text_config, "num_attention_heads", 0) or 0
    if isinstance(heads, int) and heads % tp:
        return (
            f"ValueError: Total number of attention heads ({heads}) must be divisible by "
            f"tensor parallel size ({tp})."
        )
    return None


def is_peer_refusal(error: BaseException) -> bool:
    """Whether ``error`` is the peer refusing (an ``assert`` or ``raise`` statement in the
    wheel's own code), not Python failing on a placeholder (unpacking, arithmetic)."""
    trace = error.__traceback__
    last = None
    while trace is not None:
        last = trace
        trace = trace.tb_next
    if last is None:
        return False
    line = linecache.getline(last.tb_frame.f_code.co_filename, last.tb_lineno).strip()
    return line.startswith(("raise", "assert"))


def _check_computed(shapes: Sequence[Sequence[Any]], dtypes: Sequence[Any]) -> None:
    """Refuse a result that a placeholder reached: at least one non-empty shape, every dim an
    int, one dtype per shape (a placeholder iterates as nothing)."""
    if not shapes or any(len(shape) == 0 for shape in shapes) or len(dtypes) != len(shapes):
        raise TypeError(f"shapes {shapes!r} / dtypes {dtypes!r}: a placeholder was reached")
    for shape in shapes:
        if not all(isinstance(dim, int) for dim in shape):
            raise TypeError(f"shape {shape!r} holds a placeholder")
    for dtype in dtypes:
        if not hasattr(dtype, "itemsize") or isinstance(dtype, Stub):
            raise TypeError(f"dtype {dtype!r} is a placeholder")


def _show_shapes(shapes: Sequence[Sequence[int]], dtypes: Sequence[Any]) -> str:
    return ", ".join(
        f"{tuple(shape)} {getattr(dtype, 'name', dtype)}"
        for shape, dtype in zip(shapes, dtypes, strict=False)
    )


def family_of(mapping: Mapping[str, Any]) -> str:
    """A label for the report: the model type, with a wrapper's text/LLM model type."""
    root = str(mapping.get("model_type"))
    for key in ("text_config", "llm_config"):
        inner = mapping.get(key)
        if isinstance(inner, Mapping) and inner.get("model_type"):
            return f"{root}/{inner['model_type']}"
    return root


# --- SGLang ----------------------------------------------------------------------------------

SGLANG_KINDS = {
    "MambaConfig": "mamba1",
    "FalconMambaConfig": "mamba1",
    "Mamba2Config": "mamba2",
    "NemotronHConfig": "mamba2",
    "NemotronHPuzzleConfig": "mamba2",
    "FalconH1Config": "mamba2",
    "GraniteMoeHybridConfig": "mamba2",
    "Qwen3NextConfig": "gated_delta_net",
    "Qwen3_5Config": "gated_delta_net",
    "Qwen3_5MoeConfig": "gated_delta_net",
    "Qwen3_5TextConfig": "gated_delta_net",
    "Qwen3_5MoeTextConfig": "gated_delta_net",
    "InternS2PreviewConfig": "gated_delta_net",
    "InternS2MobiusConfig": "gated_delta_net",
    "InternS2MobiusTextConfig": "gated_delta_net",
    "JetNemotronConfig": "gated_delta_net",
    "JetVLMConfig": "gated_delta_net",
    "GigaChat35Config": "gated_delta_net",
    "KimiLinearConfig": "kda",
    "Glm5NextTextConfig": "kda",
    "Lfm2Config": "short_conv",
    "Lfm2MoeConfig": "short_conv",
    "Lfm2VlConfig": "short_conv",
    "ZayaConfig": "short_conv",
    "MiniCPMHybridConfig": "linear_attention",
}


# SGLang's own names for a config's tensors where a layer holds several conv tensors:
# Zaya's conv[1] is prev_hs (S:sglang/srt/configs/zaya.py:257-260); its temporal is the
# pool's ssm state (memory_pool.py:655-657).
SGLANG_TENSOR_NAMES: Final = {"ZayaConfig": ("conv", "prev_hs", "ssm")}

RECURRENT_KINDS: Final = frozenset({"gated_delta_net", "kda", "linear_attention"})

_HEADS_SPLIT: Final = re.compile(
    r"self\.(total_num_heads|num_q_heads_full) % (self\.)?(attn_)?tp_size == 0"
)
_GROUPS_SPLIT: Final = re.compile(r"self\.num_k_heads_full % self\.tp_size == 0")


class SglangStates:
    """SGLang 0.5.23's per-sequence state, from its wheel (see the module docstring)."""

    def __init__(self, wheels: Wheels, *, mamba_ssm_dtype: str | None = None) -> None:
        self.root = wheels.sglang
        self.parallel = Parallel()
        self.runtime = sglang_runtime(wheels, self.parallel, mamba_ssm_dtype=mamba_ssm_dtype)
        self.mamba_ssm_dtype = mamba_ssm_dtype
        self.registry = self._registry()
        self.entry_classes = self._entry_classes()
        self.entry_files = self._entry_files()
        self.failed: dict[str, str] = {}
        self.last_model_config: Any = None
        self.last_chosen: Any = None

    def __enter__(self) -> SglangStates:
        self.runtime.__enter__()
        configs = _LazyConfigs(self)
        self.runtime.stubs["sglang.srt.configs"] = configs
        self.runtime.partial["sglang.srt.utils.hf_transformers.common"] = (
            None,
            (
                "get_hf_text_config",
                "_patch_text_config",
                "CONTEXT_LENGTH_KEYS",
                "get_context_length",
            ),
        )
        self.runtime.real.add("sglang.srt.configs.hybrid_arch")
        self.runtime.real.add("sglang.srt.configs.mamba_utils")
        self.runtime.real.add("sglang.srt.configs.linear_attn_model_registry")
        self.hybrid_arch = self.runtime.import_module("sglang.srt.configs.hybrid_arch")
        self.linear_attn_registry = self.runtime.import_module(
            "sglang.srt.configs.linear_attn_model_registry"
        )
        return self

    def __exit__(self, *exc: object) -> None:
        self.runtime.__exit__(*exc)

    def _registry(self) -> dict[str, tuple[str, str]]:
        """model_type -> (module, class) of SGLang's ``_CONFIG_REGISTRY``."""
        common = self.root / "sglang/srt/utils/hf_transformers/common.py"
        names: list[str] = []
        for node in ast.parse(common.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.AnnAssign | ast.Assign) and "_CONFIG_REGISTRY" in ast.unparse(
                node.target if isinstance(node, ast.AnnAssign) else node.targets[0]
            ):
                comprehension = node.value
                if isinstance(comprehension, ast.DictComp):
                    iterable = comprehension.generators[0].iter
                    if isinstance(iterable, ast.List):
                        names = [ast.unparse(item) for item in iterable.elts]
        modules = class_modules(self.root)
        # A type registered twice: the last file's (then the registry's) wins.
        registered = self_registered(self.root)
        table = {model_type: (module, cls) for model_type, module, cls in registered}
        for name in names:
            module = modules.get(name)
            if module is None:
                continue
            model_type = class_model_type(self.root / (module.replace(".", "/") + ".py"), name)
            if model_type is not None:
                table[model_type] = (module, name)
        return table

    def _entry_classes(self) -> set[str]:
        """Architectures SGLang serves: every ``EntryClass`` of S:sglang/srt/models/*.py."""
        served: set[str] = set()
        for path in sorted((self.root / "sglang/srt/models").rglob("*.py")):
            for node in ast.parse(path.read_text(encoding="utf-8")).body:
                if isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == "EntryClass" for t in node.targets
                ):
                    value = node.value
                    items = value.elts if isinstance(value, ast.List | ast.Tuple) else [value]
                    served.update(ast.unparse(item) for item in items)
        return served

    def _entry_files(self) -> dict[str, Path]:
        """Architecture -> the S:sglang/srt/models file whose ``EntryClass`` serves it."""
        files: dict[str, Path] = {}
        for path in sorted((self.root / "sglang/srt/models").rglob("*.py")):
            for node in ast.parse(path.read_text(encoding="utf-8")).body:
                if isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == "EntryClass" for t in node.targets
                ):
                    value = node.value
                    items = value.elts if isinstance(value, ast.List | ast.Tuple) else [value]
                    for item in items:
                        files.setdefault(ast.unparse(item), path)
        return files

    def attention_check(self, arch: str, mapping: Mapping[str, Any], tp: int) -> str | None:
        """The attention layer's head-split asserts of the model file serving ``arch``,
        mirrored: ``assert self.total_num_heads % tp_size == 0`` (e.g.
        S:sglang/srt/models/falcon_h1.py:120, granitemoehybrid.py:196) on the text config's
        ``num_attention_heads``, and ZAYA1's ``self.num_k_heads_full % self.tp_size == 0`` on
        its ``num_query_groups`` (S:sglang/srt/models/zaya.py:892-925, which keeps each KV head
        on one rank): the first such assert in that file, found in the wheel; None when the file
        has none or the heads split. The config's fields are read as SGLang's class holds them
        where the classes run (``--transformers``), else from the file."""
        path = self.entry_files.get(arch)
        if path is None:
            return None
        fields = self._attention_fields(mapping)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Assert):
                continue
            test = ast.unparse(node.test)
            name = (
                "num_attention_heads"
                if _HEADS_SPLIT.fullmatch(test)
                else "num_query_groups"
                if _GROUPS_SPLIT.fullmatch(test)
                else None
            )
            if name is None:
                continue
            heads = fields.get(name)
            if isinstance(heads, int) and heads > 0 and heads % tp:
                return (
                    f"AssertionError: {test} (S:{_relative(str(path), self.root)}:"
                    f"{node.lineno}: {name} {heads}, tp {tp})"
                )
        return None

    def _attention_fields(self, mapping: Mapping[str, Any]) -> Mapping[str, Any]:
        """The text config's fields: the class's where the classes run, else the file's."""
        snapshots = class_probe.active()
        if snapshots is not None:
            answer = snapshots.answer("sglang", mapping)
            if "snapshot" in answer:
                root = attribute_view(answer["snapshot"])
                text = root.get("text_config")
                return (
                    attribute_view(text) if isinstance(text, Mapping) and "attrs" in text else root
                )
        text = mapping.get("text_config") or mapping
        return text if isinstance(text, Mapping) else {}

    def _object(self, snapshot: Mapping[str, Any]) -> Any:
        """A config object from its snapshot: SGLang's class, run from the wheel over the
        snapshot's attributes (its properties computed by the wheel's code); transformers' as
        attributes."""
        module, name = str(snapshot["__module__"]), str(snapshot["__class__"])
        if module.startswith("sglang."):
            self.runtime.real.add(module)
            cls = getattr(self.runtime.import_module(module), name)
            made = object.__new__(cls)
            made.__dict__.update(rebuild(dict(snapshot["attrs"]), self._object))
            _base_properties(made)
            return made
        return PretrainedConfig(**rebuild(attribute_view(snapshot), self._object))

    def config_class(self, name: str) -> type:
        """SGLang's config class ``name``, its module run whole."""
        module = class_modules(self.root)[name]
        self.runtime.real.add(module)
        cls: type = getattr(self.runtime.import_module(module), name)
        return cls

    def state(self, mapping: Mapping[str, Any], *, tp: int = 1, spec: int = 0) -> PeerState:
        """SGLang's state for ``mapping`` at ``tp`` ranks (``spec`` does not change SGLang's
        state pool: its draft states live in separate scratch buffers)."""
        family = family_of(mapping)
        base: dict[str, Any] = {"server": "sglang", "family": family, "tp": tp, "spec": spec}
        self.parallel.tp = tp
        architectures = mapping.get("architectures") or []
        arch = architectures[0] if architectures else None
        if arch not in self.entry_classes:
            return PeerState(
                **base,
                refusal=f"Unsupported: {SGLANG} has no model for architecture {arch!a} "
                "(no EntryClass in sglang/srt/models)",
            )
        model_type = mapping.get("model_type")
        entry = self.registry.get(str(model_type))
        if entry is None:
            return PeerState(
                **base,
                refusal=None,
                layer_rule=f"{SGLANG} has no config class for model_type {model_type!a}: "
                "transformers' config, which mambaish_config never picks (no recurrent state)",
            )
        base["attention_refusal"] = self.attention_check(str(arch), mapping, tp)
        try:
            return self._state(entry, mapping, base)
        except Exception as error:
            return _failed(base, error)

    def _state(
        self, entry: tuple[str, str], mapping: Mapping[str, Any], base: dict[str, Any]
    ) -> PeerState:
        module, name = entry
        cls = self.config_class(name)
        snapshots = class_probe.active()
        if snapshots is None:
            config = cls(**copy.deepcopy(dict(mapping)))
        else:
            # The class SGLang built, under the transformers it pins (AutoConfig, then its own
            # class: S:sglang/srt/utils/hf_transformers/config.py:214-300); its refusal is
            # SGLang's.
            answer = snapshots.answer("sglang", mapping)
            if "snapshot" not in answer:
                why = answer.get("refusal") or answer.get("no_class")
                raise ConfigRefusal(f"{why} (config class, {answer.get('at')})")
            config = rebuild(answer["snapshot"], self._object)
        text_config = getattr(config, "text_config", None)
        if isinstance(text_config, dict):
            # transformers' wrapper configs (e.g. Lfm2VlConfig.__init__, the base SGLang's
            # S:sglang/srt/configs/lfm2_vl.py:27 subclasses) turn a text_config dict into a
            # config object; the stubbed PretrainedConfig does not, so mirror it with attributes.
            config.text_config = types.SimpleNamespace(**text_config)
        # ModelConfig.linear_attn_registry_result (S:sglang/srt/configs/model_config.py:
        # 1258-1260): the registry a config module fills when it is imported (GigaChat35,
        # S:sglang/srt/configs/gigachat35.py:234-252), run from the wheel.
        model_config = types.SimpleNamespace(
            hf_config=config,
            is_draft_model=False,
            linear_attn_registry_result=self.linear_attn_registry.get_linear_attn_config(config),
        )
        chosen = self.hybrid_arch.mambaish_config(model_config)
        self.last_model_config, self.last_chosen = model_config, chosen
        ran = [
            "S:sglang/srt/configs/hybrid_arch.py:145-155 (mambaish_config)",
            f"S:{module.replace('.', '/')}.py:{name}.__init__",
        ]
        if chosen is None:
            return PeerState(
                **base,
                layer_rule="mambaish_config returns None: no recurrent state",
                ran=tuple(ran),
            )
        params = chosen.mamba2_cache_params
        source = inspect.getsourcefile(type(chosen)) or ""
        ran.append(f"S:{_relative(source, self.root)}:{type(chosen).__name__}.mamba2_cache_params")
        if params is None:
            return PeerState(**base, layer_rule="mamba2_cache_params is None", ran=tuple(ran))
        kind = _sglang_kind(chosen)
        convs = [tuple(shape) for shape in params.shape.conv]
        temporal = tuple(params.shape.temporal)
        own_names = SGLANG_TENSOR_NAMES.get(type(chosen).__name__)
        if own_names is not None and len(own_names) == len(convs) + 1:
            names = list(own_names)
        else:
            # A short conv's temporal is a placeholder in MambaPool's ssm state
            # (S:sglang/srt/mem_cache/memory_pool.py:655-657): "ssm", as for Mamba.
            state_name = "recurrent" if kind in RECURRENT_KINDS else "ssm"
            names = [f"conv{index}" if index else "conv" for index in range(len(convs))]
            names.append(state_name)
        # A zero-element tensor (Zaya's placeholder temporal state) is still allocated by
        # MambaPool (S:sglang/srt/mem_cache/memory_pool.py:655-657), at 0 bytes: kept.
        kept = list(
            zip(
                names,
                [*convs, temporal],
                [params.dtype.conv] * len(convs) + [params.dtype.temporal],
                strict=True,
            )
        )
        notes: list[str] = []
        tensors = tuple(
            tensor(tensor_name, shape, dtype.name, dtype.itemsize)
            for tensor_name, shape, dtype in kept
        )
        layers = tuple(int(index) for index in params.layers)
        dtype_rule = (
            f"mamba2_state_dtype({_dtype_argument(type(chosen))}): conv "
            f"{params.dtype.conv.name}, temporal {params.dtype.temporal.name} "
            "(S:sglang/srt/configs/mamba_utils.py:47-107)"
        )
        per_req = params.mamba_cache_per_req
        state = PeerState(
            **base,
            groups=(PeerGroup(kind, layers, tensors),) if layers else (),
            layer_rule=f"{type(chosen).__name__}.mamba2_cache_params.layers",
            dtype_rule=dtype_rule,
            ran=(*ran, "S:sglang/srt/configs/mamba_utils.py:115-125 (mamba_cache_per_req)"),
            notes=tuple(notes),
        )
        if per_req != state.per_sequence_bytes:
            raise AssertionError(
                f"oracle: mamba_cache_per_req {per_req} != the tensors' {state.per_sequence_bytes}"
            )
        return state


def _dtype_argument(cls: type) -> str:
    """What ``cls.mamba2_cache_params`` passes to ``mamba2_state_dtype``: "config" when it
    passes its config (whose ``mamba_ssm_dtype`` then applies), "no config" when it calls it
    bare or leaves the params' default, read from the property's source in the wheel."""
    for klass in cls.__mro__:
        prop = klass.__dict__.get("mamba2_cache_params")
        if prop is None:
            continue
        try:
            source = inspect.getsource(prop.fget)
        except (OSError, TypeError):
            return "unknown"
        for node in ast.walk(ast.parse(textwrap.dedent(source))):
            if isinstance(node, ast.Call) and ast.unparse(node.func).endswith("mamba2_state_dtype"):
                return "config" if node.args or node.keywords else "no config"
        return "no config"
    return "unknown"


def _failed(base: dict[str, Any], error: Exception) -> PeerState:
    """The peer's refusal (an ``assert``/``raise`` of its own, or a field the checkpoint lacks:
    ``AttributeError``/``KeyError`` fail the server alike), else an oracle gap: Python failing
    on a placeholder, recorded as a note "oracle gap" that the comparisons count apart. A
    ``TypeError`` on a real ``None`` (no placeholder in it) is the peer failing too."""
    if isinstance(error, AttributeError | KeyError) or is_peer_refusal(error):
        return PeerState(**base, refusal=refusal_text(error))
    if isinstance(error, TypeError) and "'NoneType'" in str(error) and "Stub" not in str(error):
        # The wheel's code on a field the config leaves None (transformers' default, e.g.
        # KimiLinearConfig.linear_attn_config, Lfm2MoeConfig.layer_types): the server fails
        # to start on it just the same, so it counts as the peer refusing.
        return PeerState(**base, refusal=f"fails on a None field: {refusal_text(error)}")
    return PeerState(**base, notes=(f"oracle gap: {refusal_text(error)}",))


def _numel(shape: Sequence[int]) -> int:
    total = 1
    for dim in shape:
        total *= int(dim)
    return total


def _sglang_kind(config: Any) -> str:
    """The kind of recurrent layer of SGLang's config class (Bailing's by ``use_kda``)."""
    name = type(config).__name__
    if name == "BailingHybridConfig":
        return "kda" if getattr(config, "use_kda", False) else "linear_attention"
    return SGLANG_KINDS.get(name, "unknown")


def _relative(path: str, root: Path) -> str:
    try:
        return str(Path(path).relative_to(root))
    except ValueError:
        return path


class _LazyConfigs(StubModule):
    """``sglang.srt.configs`` whose names import their own module on first use, so that
    ``hybrid_arch``'s ``from sglang.srt.configs import (...)`` runs only what it touches
    (the package ``__init__`` imports every model's config)."""

    def __init__(self, states: SglangStates) -> None:
        super().__init__("sglang.srt.configs", states.runtime.touched)
        self.__path__ = [str(states.root / "sglang/srt/configs")]
        self._states = states

    def __getattr__(self, attribute: str) -> Any:
        if attribute.startswith("_"):
            raise AttributeError(attribute)
        try:
            value = self._states.config_class(attribute)
        except Exception as error:  # a config module that does not run here
            self._states.failed[attribute] = refusal_text(error)
            value = type(attribute, (), {"__doc__": f"not loaded: {refusal_text(error)}"})
        setattr(self, attribute, value)
        return value


def tensors_of(state: PeerState) -> list[PeerTensor]:
    """Every tensor of ``state``, in group order."""
    return [item for group in state.groups for item in group.tensors]
