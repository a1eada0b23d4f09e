"""Which dtype each state tensor gets, and the rule (with its citation) that chose it.

One place for every dtype rule of the three layouts; ``decode_ring.servers`` imports them from
here. A rule is a ``(dtype, rule)`` pair. The roles:

``conv``
    vLLM ``--mamba-cache-dtype`` (``auto``: the model dtype, vllm/config/cache.py:296-299);
    SGLang ``SGLANG_MAMBA_CONV_DTYPE`` (bfloat16, sglang/srt/environ.py:1628); metrale float32.
``ssm`` (Mamba, Mamba-2, gated delta net; SGLang's KDA and linear attention too)
    vLLM ``--mamba-ssm-cache-dtype``: ``auto`` follows the conv state
    (``_mamba_state_dtype``, vllm/model_executor/layers/mamba/mamba_utils.py:98-111) unless the
    architecture's hook sets it from the config (``VLLM_SSM_HOOKS``: NemotronH, Qwen3.5, keyed as
    vLLM's ``MODELS_CONFIG_MAP`` keys them, by the architecture); SGLang
    ``mamba2_state_dtype``: float32, or the config's ``mamba_ssm_dtype`` where the family passes
    its config (sglang/srt/configs/mamba_utils.py:47-107); metrale float32.
``kda`` (the KDA recurrent state)
    vLLM ``kda_state_dtype`` (mamba_utils.py:133-151): ``auto`` is float32, and only float32 or
    bfloat16 are accepted, where the caller passes ``--mamba-ssm-cache-dtype`` at all (the
    family's ``DtypeHooks``; vLLM's model-level view and its layer may differ there, ``view``);
    elsewhere as ``ssm``.
``linear`` (the lightning / linear-attention state)
    vLLM ``linear_attention_state_dtype`` (mamba_utils.py:55-62) reads ``--mamba-cache-dtype``,
    i.e. the model dtype; elsewhere as ``ssm`` (SGLang: float32).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from ..printable import show
from ..releases import VLLM
from ..releases.sglang import SglangRules
from ..releases.vllm import VllmRules
from .errors import refuse_argument
from .fields import Fields

__all__ = [
    "DTYPE_BYTES",
    "NEMOTRON_H_HOOK",
    "QWEN3_5_HOOK",
    "VLLM_SSM_HOOKS",
    "DtypeHooks",
    "DtypeRules",
    "Rule",
    "VllmSsmHook",
    "dtype_argument",
    "vllm_model_dtype",
]

DTYPE_BYTES: Final[Mapping[str, int]] = {"bfloat16": 2, "float16": 2, "float32": 4}
_ALIASES: Final[Mapping[str, str | None]] = {
    "auto": None,
    "bfloat16": "bfloat16",
    "bf16": "bfloat16",
    "float16": "float16",
    "fp16": "float16",
    "half": "float16",
    "float32": "float32",
    "fp32": "float32",
    "float": "float32",
}

Rule = tuple[str, str]
"""A dtype and the rule that chose it."""

_VLLM_UTILS: Final = "vllm/model_executor/layers/mamba/mamba_utils.py"
_SGLANG_UTILS: Final = "sglang/srt/configs/mamba_utils.py"


@dataclass(frozen=True, slots=True)
class VllmSsmHook:
    """A vLLM ``VerifyAndUpdateConfig`` that sets an ``auto`` ``--mamba-ssm-cache-dtype`` from
    the config's ``field``: to ``default`` when the field is missing (``None``: left ``auto``),
    and left ``auto`` when it is ``null`` only if ``null_is_missing``."""

    field: str
    default: str | None
    null_is_missing: bool
    label: str
    citation: str


# Its default is the release's (VllmRules.nemotron_h_ssm_default), set where it is looked up.
NEMOTRON_H_HOOK: Final = VllmSsmHook(
    "mamba_ssm_cache_dtype",
    None,
    null_is_missing=False,
    label="vLLM NemotronH",
    citation="vllm/model_executor/models/config.py:812-848",
)
QWEN3_5_HOOK: Final = VllmSsmHook(
    "mamba_ssm_dtype",
    None,
    null_is_missing=True,
    label="vLLM Qwen3.5",
    citation="vllm/model_executor/models/config.py:953-977",
)


# vLLM's MODELS_CONFIG_MAP (vllm/model_executor/models/config.py:1211-1269), looked up by the
# architecture vLLM resolved (vllm/config/vllm.py:2744-2764): the hooks that set an ``auto``
# --mamba-ssm-cache-dtype. An architecture not listed keeps ``auto`` even where its text model
# is one of these (MiniCPM-V 4.6/4.7, MiniCPM-OCR, InternS2, the NemotronH Omni-V3 wrappers).
VLLM_SSM_HOOKS: Final[Mapping[str, VllmSsmHook]] = {
    "NemotronHForCausalLM": NEMOTRON_H_HOOK,
    "NemotronHPuzzleForCausalLM": NEMOTRON_H_HOOK,
    # NemotronHNanoVLV2Config, on the text config (config.py:842-848).
    "NemotronH_Nano_VL_V2": NEMOTRON_H_HOOK,
    "Qwen3_5ForCausalLM": QWEN3_5_HOOK,
    "Qwen3_5MoeForCausalLM": QWEN3_5_HOOK,
    "Qwen3_5ForConditionalGeneration": QWEN3_5_HOOK,
    "Qwen3_5MoeForConditionalGeneration": QWEN3_5_HOOK,
    # Subclasses of Qwen3_5ForConditionalGenerationConfig (config.py:1010-1119).
    "ColQwen3_5": QWEN3_5_HOOK,
    "D3ForSequenceClassification": QWEN3_5_HOOK,
    "Qwen4ExpForCausalLM": QWEN3_5_HOOK,
    "Qwen4ExpForConditionalGeneration": QWEN3_5_HOOK,
}


@dataclass(frozen=True, slots=True)
class DtypeHooks:
    """A family's dtype facts: whether SGLang's ``mamba2_cache_params`` passes the config to
    ``mamba2_state_dtype`` (so ``mamba_ssm_dtype`` counts), and where vLLM's KDA layer reads
    ``--mamba-ssm-cache-dtype`` only when a config key says so (``vllm_kda_layer_gate``, a path
    of keys). Which families' KDA reads the flag at all is the release's
    (``VllmRules.kda_ssm_dtype_families``)."""

    sglang_passes_config: bool = False
    # Kimi's KDA layer is KimiK3DeltaAttention, which reads the flag, only where
    # linear_attn_config.use_full_rank_gate is true; else KimiGatedDeltaNetAttention, whose
    # get_state_dtype passes no flag (vllm/models/kimi_k3/nvidia/model.py:715-733,
    # model_executor/layers/mamba/gdn/kimi_gdn_linear_attn.py:157-164).
    vllm_kda_layer_gate: tuple[str, ...] | None = None


NO_HOOKS: Final = DtypeHooks()


def dtype_argument(name: str, value: object) -> str | None:
    """The canonical dtype an override names, ``None`` for no override (``None``, ``"auto"``)."""
    if value is None:
        return None
    if isinstance(value, str) and value.strip().lower() in _ALIASES:
        return _ALIASES[value.strip().lower()]
    raise refuse_argument(
        name,
        f"unknown dtype {show(value)}; use bfloat16, float16 or float32 "
        "(or bf16, fp16, half, fp32, float, auto)",
    )


def vllm_model_dtype(cfg: Fields) -> Rule:
    """vLLM's ``--dtype auto`` for the config (vllm/config/model.py:2423-2464 and
    transformers_utils/model_arch_config_convertor.py:201-239), on a bfloat16-capable GPU: the
    config's ``dtype`` or ``torch_dtype``, else its text config's; float32 and float64 become
    bfloat16, and no dtype at all is taken as bfloat16."""
    for where in (cfg.root, cfg.fields):
        for key in ("dtype", "torch_dtype"):
            raw = where.get(key)
            if raw is None:
                continue
            if raw in ("bfloat16", "float16"):
                return str(raw), f"config {key} {raw} (vLLM: model dtype)"
            if raw in ("float32", "float64"):
                # Float32 models are downcast; float64 is unsupported and falls back likewise.
                return "bfloat16", f"config {key} {raw}, as bfloat16 (vLLM: model dtype)"
            raise cfg.fail(key, f"unknown dtype {show(raw)}")
    return "bfloat16", "no dtype in config: bfloat16 (vLLM: weights' dtype, float32 downcast)"


class DtypeRules:
    """The dtype of each role (see the module) for one config under one layout, with the
    ``--conv-dtype`` / ``--ssm-dtype`` overrides (``None``: the layout's rule), the vLLM SSM hook
    of the config's architecture (``VLLM_SSM_HOOKS``), and vLLM's ``view``: ``layer`` (what the
    layer allocates) or ``model`` (``get_mamba_state_dtype_from_config``, which sizes pages);
    ``vllm`` and ``sglang``, the rules of the release the layout's server answers for."""

    __slots__ = (
        "cfg",
        "conv_override",
        "hooks",
        "layout",
        "sglang",
        "ssm_override",
        "view",
        "vllm",
        "vllm_ssm",
    )

    def __init__(
        self,
        cfg: Fields,
        hooks: DtypeHooks,
        layout: str,
        conv_override: str | None,
        ssm_override: str | None,
        *,
        vllm_ssm: VllmSsmHook | None = None,
        view: str = "layer",
        vllm: VllmRules | None = None,
        sglang: SglangRules | None = None,
    ) -> None:
        self.cfg = cfg
        self.hooks = hooks
        self.layout = layout
        self.conv_override = conv_override
        self.ssm_override = ssm_override
        self.vllm_ssm = vllm_ssm
        self.view = view
        self.vllm = vllm
        self.sglang = sglang

    def conv(self) -> Rule:
        """The conv state's dtype."""
        if self.conv_override is not None:
            return self.conv_override, "override --conv-dtype"
        if self.layout == "metrale":
            return "float32", "metrale: float32"
        if self.layout == "sglang":
            return "bfloat16", f"SGLang default bfloat16 ({_SGLANG_UTILS}:68)"
        return vllm_model_dtype(self.cfg)

    def ssm(self) -> Rule:
        """The SSM (temporal) state's dtype."""
        if self.ssm_override is not None:
            return self.ssm_override, "override --ssm-dtype"
        if self.layout == "metrale":
            return "float32", "metrale: float32"
        if self.layout == "sglang":
            return self._sglang_ssm()
        return self._vllm_ssm()

    def kda(self) -> Rule:
        """The KDA recurrent state's dtype. vLLM refuses a flag dtype it cannot keep where the
        model-level view reads the flag, which it does at startup whatever the layer reads."""
        if self.layout != "vllm":
            return self.ssm()
        wanted = self.ssm_override
        if wanted not in (None, "float32", "bfloat16") and self._kda_family_reads_flag():
            raise refuse_argument(
                "ssm_dtype",
                f"{VLLM} keeps a KDA recurrent state only in float32 or "
                f"bfloat16 ({_VLLM_UTILS}:143-149), not {wanted}",
                path=self.cfg.path,
                family=self.cfg.family,
            )
        if wanted is None or not self._kda_reads_flag():
            return "float32", f"vLLM KDA default float32 ({_VLLM_UTILS}:133-151)"
        return wanted, "override --ssm-dtype"

    def _kda_reads_flag(self) -> bool:
        """Whether vLLM's KDA dtype, in this view, reads ``--mamba-ssm-cache-dtype``."""
        gate = self.hooks.vllm_kda_layer_gate
        if not self._kda_family_reads_flag():
            return False
        if self.view == "model" or gate is None:
            return True
        value: object = self.cfg.fields
        for key in gate:
            value = value.get(key) if isinstance(value, Mapping) else None
        return bool(value)

    def _kda_family_reads_flag(self) -> bool:
        return self.vllm is not None and self.cfg.family in self.vllm.kda_ssm_dtype_families

    def gated_delta_net(self) -> Rule:
        """The gated delta net's recurrent state's dtype: under vLLM before 0.17.0 the conv
        state's, whatever ``--mamba-ssm-cache-dtype`` says (``gated_delta_net_state_dtype``)."""
        if self.layout == "vllm" and self.vllm is not None and not self.vllm.gdn_reads_ssm_dtype:
            dtype, rule = self.conv()
            return dtype, f"{rule}; as conv state (gated_delta_net_state_dtype reads no SSM flag)"
        return self.ssm()

    def linear(self) -> Rule:
        """The linear-attention state's dtype."""
        if self.layout != "vllm":
            return self.ssm()
        floats = self.vllm is None or self.vllm.linear_attention_float32
        if self.conv_override == "float32" and not floats:
            raise refuse_argument(
                "conv_dtype",
                "this vLLM release refuses a float32 linear-attention state: 'fp32 state for "
                "minimax is not yet supported' (mamba_utils.py linear_attention_state_dtype)",
                path=self.cfg.path,
                family=self.cfg.family,
            )
        if self.conv_override is not None:
            return self.conv_override, "override --conv-dtype (vLLM: --mamba-cache-dtype)"
        dtype, rule = vllm_model_dtype(self.cfg)
        return dtype, f"{rule}; linear_attention_state_dtype ({_VLLM_UTILS}:55-62)"

    def _sglang_ssm(self) -> Rule:
        # SGLang mamba_utils.py:70-92: float32 unless the config passed in says mamba_ssm_dtype
        # (from 0.5.9; before, the --mamba-ssm-dtype default float32, whatever the config says).
        raw = self.cfg.fields.get("mamba_ssm_dtype")
        default = "float32", f"SGLang default float32 ({_SGLANG_UTILS}:70)"
        if self.sglang is not None and not self.sglang.ssm_dtype_from_config:
            return "float32", "SGLang --mamba-ssm-dtype default float32 (the config's not read)"
        if not self.hooks.sglang_passes_config or raw is None:
            return default
        if isinstance(raw, str) and raw in DTYPE_BYTES:
            return raw, f"config mamba_ssm_dtype (SGLang, {_SGLANG_UTILS}:73-92)"
        return "float32", f"config mamba_ssm_dtype {show(raw)} invalid: SGLang default float32"

    def _vllm_ssm(self) -> Rule:
        dtype, _ = self.conv()
        follow = dtype, f"as conv state (vLLM: mamba_ssm_cache_dtype auto, {_VLLM_UTILS}:98-111)"
        hook = self.vllm_ssm
        if hook is None:
            return follow
        # A field the file does not give is the hook's default (the class's own, where it
        # declares one, is the same: NemotronHConfig.mamba_ssm_cache_dtype float32).
        fields = self.cfg.fields if hook.field in self.cfg.given else {}
        missing = hook.field not in fields or (hook.null_is_missing and fields[hook.field] is None)
        if missing:
            if hook.default is None:
                return follow
            return hook.default, f"{hook.label} default {hook.default} ({hook.citation})"
        raw = fields[hook.field]
        if isinstance(raw, str) and raw in DTYPE_BYTES:
            return raw, f"config {hook.field} ({hook.label}, {hook.citation})"
        if raw == "auto":
            return follow
        raise self.cfg.fail(hook.field, f"unknown dtype {show(raw)}")
