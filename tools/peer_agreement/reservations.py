"""What vLLM 0.33.0 and SGLang 0.5.23 reserve for recurrent state, from their own code (issue 18).

``VllmReservations(wheels).reservation(config, ...)`` and
``SglangReservations(wheels).reservation(config, ...)`` return dicts with issue 18's field
names; ``vllm_reservation`` / ``sglang_reservation`` are one-shot wrappers with the servers'
flag names. Everything below is computed by the peers' functions, run from the wheels with
torch stubbed (``wheels.py``); what is assumed instead is listed in ``ASSUMPTIONS`` and in each
answer's ``assumptions`` field.

vLLM, in the order the server runs it:
  1. The state, the model class and the allocating layer (``states.VllmStates``).
  2. ``--enable-prefix-caching`` default: on unless the registered model class is
     ``IsAttentionFree`` (``ModelConfig.is_prefix_caching_supported``, V:vllm/config/model.py:
     2239-2291, mirrored: generative hybrid and decoder models support it, attention-free ones
     do not; a hybrid class whose config has no attention layer is still hybrid).
  3. ``MambaModelConfig.verify_and_update_config`` (V:vllm/model_executor/models/config.py:
     750-787, run): ``mamba_cache_mode`` align/none and ``mamba_block_size``.
  4. The layer is built after that (its ``__init__`` reads the mode: the GDN FlashInfer
     checkpoint alignment, V:.../gdn/qwen_gdn_linear_attn.py:689-702).
  5. ``Platform._align_hybrid_block_size`` (V:vllm/platforms/interface.py:940-1137, run) with
     the attention backend's kernel block sizes; it raises the block size and sets
     ``mamba_page_size_padded``.
  6. The layers' KV cache specs: ``FullAttentionSpec`` / ``MLAAttentionSpec`` per attention
     layer (V:vllm/v1/kv_cache_interface.py, run) and the layer's own ``get_kv_cache_spec``
     (``MambaSpec``) per recurrent layer.
  7. ``_get_kv_cache_groups_uniform_page_size`` and ``_get_kv_cache_bytes_per_block``
     (V:vllm/v1/core/kv_cache_planning.py:416-605, run).
  8. ``num_blocks = kv_cache_memory_bytes // bytes_per_block`` (V:vllm/v1/core/
     kv_cache_planning.py:642-741, mirrored) and ``get_max_concurrency_for_kv_cache_config``
     (V:vllm/v1/core/kv_cache_utils.py:1061-1093, run): the logged "Maximum concurrency".

SGLang:
  1. The state (``states.SglangStates``): ``mamba2_cache_params`` and its
     ``mamba_cache_per_req``.
  2. ``KVCacheConfigurator._calculate_mamba_ratio`` and ``_handle_max_mamba_cache``
     (S:sglang/srt/mem_cache/kv_cache_configurator.py:3062-3088, :3229-3409, run on a stand-in
     ``self`` and stand-in ``get_schedule``/``get_exec``/``get_memory``/``get_spec``/
     ``get_context``), ``get_mamba_tracking_slots`` (S:sglang/srt/mem_cache/
     allocation_sizing.py:11-19, run).
  3. ``resolve_max_num_reqs`` (:3119-3172, run) for the running-request cap.
  4. ``MambaPool.__init__``'s allocations: ``(K + 1)`` slots of every state tensor
     (S:sglang/srt/mem_cache/memory_pool.py:722-753), mirrored as ``(K + 1) * per_req``;
     the speculative scratch ``intermediate_ssm_state_cache`` ``(L, B + 1, D, *temporal)``
     (:864-894), mirrored.
"""

from __future__ import annotations

import ast
import functools
import json
import math
import os
import sys
import traceback
import types
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .peer_state import PeerState, refusal_text
from .states import FakeVllmConfig, Permissive, SglangStates, VllmStates, is_peer_refusal
from .wheels import (
    Stub,
    StubModule,
    Wheels,
    exec_partial,
    extract_class,
    names_table,
    open_wheels,
    top_level_value,
)

__all__ = [
    "ASSUMPTIONS",
    "SGLANG_FIELDS",
    "VLLM_FIELDS",
    "SglangReservations",
    "VllmReservations",
    "sglang_reservation",
    "vllm_reservation",
]

VLLM_FIELDS = (
    "block_size",
    "attention_page_bytes",
    "state_page_bytes",
    "state_page_bytes_padded",
    "group_size",
    "state_groups",
    "attention_groups",
    "bytes_per_block",
    "state_blocks_per_request",
    "planned_blocks_per_request",
    "state_bytes",
    "planned_state_bytes",
    "num_blocks",
    "max_concurrency",
)
SGLANG_FIELDS = (
    "per_request_bytes",
    "slots",
    "pool_bytes",
    "max_running_requests",
    "speculative_scratch_bytes",
    "kv_cache_bytes",
    "kv_bytes_per_token",
    "kv_tokens",
)

ASSUMPTIONS = {
    "vllm": (
        "GPU sm90 (H100/H200) unless gpu_arch says otherwise; CUDA runtime 13",
        "attention backend FlashAttention: kernel block sizes [MultipleOf(16)] "
        "(V:vllm/v1/attention/backends/flash_attn.py:356-367, SM90 branch without FP8 KV); "
        "MLA models: FlashMLA [64] (V:vllm/v1/attention/backends/mla/flashmla.py:57-58)",
        "default --block-size 16 (CacheConfig.DEFAULT_BLOCK_SIZE, V:vllm/config/cache.py:185); "
        "the backend's preferred block size is not applied (FlashAttention prefers 16)",
        "KV cache layout block-outermost=False (LBNHC, the NHD default) for bytes_per_block",
        "one attention backend; no draft model; no --num-gpu-blocks-override",
        "--max-model-len None: ModelArchConfigConvertorBase.derive_max_model_len_and_key "
        "(V:vllm/transformers_utils/model_arch_config_convertor.py:374-407, run); "
        "_get_and_verify_max_len's RoPE-scaling adjustment is not applied",
    ),
    "sglang": (
        "speculation is EAGLE/NEXTN with topk 1; its draft KV is the target's "
        "num_nextn_predict_layers",
        "--mamba-radix-cache-strategy auto: extra_buffer with the overlap scheduler on "
        "(S:sglang/srt/arg_groups/overrides.py:369-487 on sm90 with the triton linear-attn "
        "backend); no_buffer runs without the overlap scheduler, as SGLang pairs them",
        "one attention-DP shard, no pipeline parallelism, no ReplaySSM, no fused draft state",
        "SGLANG_OPT_MAMBA_SKIP_DECODE_LOCK unset",
        "kv_cache_bytes is what _handle_max_mamba_cache leaves for the KV pool; its tokens are "
        "DefaultPoolConfigurator.calculate_pool_sizes (page size 1) of _compute_cell_size, run "
        "from the wheel with ModelConfig._derive_model_shapes / get_num_kv_heads and the auto "
        "KV dtype (_get_and_verify_dtype); no context or DSA layer split, no QSA, no hisparse",
    ),
}


def _function(path: Path, names: Sequence[str], runtime: Any) -> dict[str, Any]:
    """Top-level functions ``names`` of ``path``, run as a partial module of the runtime."""
    module_name = f"peer_partial_{path.stem}_{abs(hash(tuple(names)))}"
    namespace: dict[str, Any] = {"__name__": module_name}
    exec_partial(path, names, namespace)
    return {name: namespace[name] for name in names}


def _debug() -> None:
    """With ``PEER_AGREEMENT_DEBUG`` set, print the traceback of a refusal (oracle work)."""
    if os.environ.get("PEER_AGREEMENT_DEBUG"):
        traceback.print_exc()


class _ModelRegistry:
    """``ModelRegistry.resolve_model_cls`` answering with the model class being sized."""

    model_cls: Any = None

    def resolve_model_cls(self, architecture: Any, model_config: Any = None) -> tuple[Any, Any]:
        return self.model_cls, architecture


class VllmReservations:
    """vLLM 0.33.0's reservation for one config, from its wheel (module docstring)."""

    def __init__(self, wheels: Wheels, *, gpu_arch: str = "sm90") -> None:
        self.states = VllmStates(wheels, gpu_arch=gpu_arch)
        self.root = wheels.vllm
        self.registry = _ModelRegistry()
        self.layers: dict[str, Any] = {}

    def __enter__(self) -> VllmReservations:
        runtime = self.states.runtime
        runtime.partial["vllm.model_executor.layers.mamba.abstract"] = (
            None,
            (
                "MambaBase",
                "get_mamba_prefill_checkpoint_alignment",
                "get_mamba_prefill_checkpoint_grid",
            ),
        )
        runtime.partial["vllm.v1.attention.backend"] = (None, ("MultipleOf",))
        runtime.partial["vllm.v1.attention.backends.gdn_attn"] = (
            None,
            ("FLASHINFER_GDN_CHECKPOINT_ALIGNMENT",),
        )
        models = StubModule("vllm.model_executor.models", runtime.touched)
        models.__path__ = [str(self.root / "vllm/model_executor/models")]
        models.ModelRegistry = self.registry  # type: ignore[attr-defined]
        runtime.stubs["vllm.model_executor.models"] = models
        self.states.__enter__()
        config_module: Any = runtime.stubs["vllm.config"]
        config_module.get_layers_from_vllm_config = lambda vc, cls=None, names=None: self.layers
        config_module.set_current_vllm_config = lambda vc: Stub()
        planning = self.root / "vllm/v1/core/kv_cache_planning.py"
        self.planning = _function(
            planning,
            (
                "create_kv_cache_group_specs",
                "_get_kv_cache_groups_uniform_page_size",
                "_get_per_layer_spec",
                "_get_layer_block_stride",
                "_get_kv_cache_bytes_per_block",
            ),
            runtime,
        )
        self.check_memory = _function(planning, ("_check_enough_kv_cache_memory",), runtime)[
            "_check_enough_kv_cache_memory"
        ]
        self.concurrency = _function(
            self.root / "vllm/v1/core/kv_cache_utils.py",
            ("get_max_concurrency_for_kv_cache_config",),
            runtime,
        )["get_max_concurrency_for_kv_cache_config"]
        platform_file = self.root / "vllm/platforms/interface.py"
        self.platform_cls = extract_class(
            runtime, platform_file, "Platform", ["_align_hybrid_block_size"]
        ).cls
        self.mamba_hook = extract_class(
            runtime,
            self.root / "vllm/model_executor/models/config.py",
            "MambaModelConfig",
            ["verify_and_update_config"],
        ).cls
        self.convertor_base = extract_class(
            runtime,
            self.root / "vllm/transformers_utils/model_arch_config_convertor.py",
            "ModelArchConfigConvertorBase",
            [
                "__init__",
                "get_total_num_attention_heads",
                "get_hidden_size",
                "get_head_size",
                "_get_qk_rope_head_dim",
                "get_total_num_kv_heads",
                "is_deepseek_mla",
                "derive_max_model_len_and_key",
            ],
        ).cls
        self.kv = runtime.import_module("vllm.v1.kv_cache_interface")
        self.layout_module = runtime.import_module("vllm.v1.kv_cache_layout")
        self.multiple_of = runtime.import_module("vllm.v1.attention.backend").MultipleOf
        self.default_block_size = _class_constant(
            self.root / "vllm/config/cache.py", "CacheConfig", "DEFAULT_BLOCK_SIZE"
        )
        return self

    def __exit__(self, *exc: object) -> None:
        self.states.__exit__(*exc)

    def _convertor(self, hf_config: Any, text_config: Any) -> Any:
        """The architecture convertor vLLM picks for the model type
        (``MODEL_ARCH_CONFIG_CONVERTORS``, V:.../model_arch_config_convertor.py:836-880), its
        own methods over the base's."""
        path = self.root / "vllm/transformers_utils/model_arch_config_convertor.py"
        table = _literal_names(path, "MODEL_ARCH_CONFIG_CONVERTORS")
        name = table.get(str(getattr(hf_config, "model_type", "")))
        cls = self.convertor_base
        if name is not None:
            methods = [
                item.name
                for item in _class_node(path, name).body
                if isinstance(item, ast.FunctionDef)
                and item.name in ("__init__", "get_head_size", "get_total_num_kv_heads")
            ]
            cls = extract_class(self.states.runtime, path, name, methods, bases=(cls,)).cls
        return cls(hf_config, text_config)

    def reservation(
        self,
        config: Mapping[str, Any],
        *,
        tensor_parallel_size: int = 1,
        max_num_seqs: int = 256,
        max_model_len: int | None = None,
        block_size: int | None = None,
        enable_prefix_caching: bool | None = None,
        num_speculative_tokens: int = 0,
        mamba_cache_dtype: str = "auto",
        mamba_ssm_cache_dtype: str = "auto",
        kv_cache_dtype: str = "auto",
        kv_cache_memory_bytes: int | None = None,
    ) -> dict[str, Any]:
        """Issue 18's ``vllm_reservation`` fields as vLLM's own code computes them."""
        tp, spec = tensor_parallel_size, num_speculative_tokens
        settings: dict[str, Any] = {}

        def prepare(vc: FakeVllmConfig) -> None:
            cache = vc.cache_config
            model_config = vc.model_config
            text = model_config.hf_text_config
            convertor = self._convertor(model_config.hf_config, text)
            use_mla = bool(convertor.is_deepseek_mla())
            attention_layers = self._attention_layers(text, vc)
            settings.update(convertor=convertor, use_mla=use_mla, attention=attention_layers)
            model_config.use_mla = use_mla
            if max_model_len is None:
                derived, _ = convertor.derive_max_model_len_and_key()
                # _get_and_verify_max_len's RoPE-scaling and sliding-window adjustments are not
                # applied (ASSUMPTIONS).
                model_config.max_model_len = int(derived) if derived != float("inf") else 2048
            else:
                model_config.max_model_len = max_model_len
            model_config.is_hybrid = bool(attention_layers)
            model_config.architecture = (config.get("architectures") or [None])[0]
            model_config.get_num_kv_heads = lambda parallel: (
                1 if use_mla else max(1, convertor.get_total_num_kv_heads() // tp)
            )
            model_config.get_head_size = convertor.get_head_size
            cache.block_size = self.default_block_size if block_size is None else block_size
            cache.user_specified_block_size = block_size is not None
            cache.enable_prefix_caching = (
                not model_config.is_attention_free
                if enable_prefix_caching is None
                else enable_prefix_caching
            )
            cache.cache_dtype = kv_cache_dtype
            vc.scheduler_config = Permissive(
                enable_chunked_prefill=True, max_num_seqs=max_num_seqs, max_num_batched_tokens=8192
            )
            vc.additional_config = {}
            self.mamba_hook.verify_and_update_config(vc)

        state = self.states.state(
            config,
            tp=tp,
            spec=spec,
            mamba_cache_dtype=mamba_cache_dtype,
            mamba_ssm_cache_dtype=mamba_ssm_cache_dtype,
            prepare=prepare,
        )
        if state.refusal or state.attention_refusal:
            return {"refusal": state.refusal or state.attention_refusal}
        setup = self.states.last
        if setup is None or setup.layer is None or not setup.layers:
            return {
                "oracle_gap": "the allocating layer could not be built",
                "notes": list(state.notes),
            }
        try:
            return self._plan(state, setup, settings, max_num_seqs, kv_cache_memory_bytes, spec)
        except ValueError as error:  # vLLM's own startup refusal
            return {"refusal": refusal_text(error)}
        except AssertionError as error:
            # A startup assert in vLLM's code: MambaSpec.page_size_bytes's page_size_padded >=
            # page_size (V:vllm/v1/kv_cache_interface.py:1127), where the layer's page exceeds
            # the padding its model-level page set (the two views).
            if not is_peer_refusal(error):
                raise
            return {"refusal": refusal_text(error)}
        except Exception as error:
            _debug()
            return {"oracle_gap": refusal_text(error)}

    def _attention_layers(self, text: Any, vc: Any) -> list[int]:
        """Layers holding a KV cache: the ones that are not recurrent, as each family's
        decoder builds them (falcon_h1: every layer; zamba2: the hybrid layers; nemotron_h:
        the ``*`` of the pattern), mirrored."""
        model_type = getattr(text, "model_type", "")
        layers = getattr(text, "num_hidden_layers", 0)
        if model_type in ("mamba", "falcon_mamba", "mamba2"):
            return []
        if model_type == "falcon_h1":
            return list(range(layers))
        if model_type == "zamba2":
            return [i for i, kind in enumerate(text.layers_block_type) if kind == "hybrid"]
        if model_type in ("nemotron_h", "nemotron_h_puzzle"):
            # NemotronHModel builds len(hybrid_override_pattern) layers
            # (V:vllm/model_executor/models/nemotron_h.py:591-614).
            return [i for i, char in enumerate(text.hybrid_override_pattern) if char == "*"]
        recurrent = set(vc.recurrent_layers)
        return [i for i in range(layers) if i not in recurrent]

    def _plan(
        self,
        state: PeerState,
        setup: Any,
        settings: dict[str, Any],
        max_num_seqs: int,
        memory: int | None,
        spec: int,
    ) -> dict[str, Any]:
        vc = setup.vc
        cache = vc.cache_config
        torch = self.states.torch
        self.layers = {f"model.layers.{i}.mixer": setup.layer for i in setup.layers}
        attention = settings["attention"]
        self.registry.model_cls = setup.model_cls
        backend = _Backend(
            [self.multiple_of(16)] if not settings["use_mla"] else [64],
        )
        platform_cls: Any = type(
            "PlatformStandIn",
            (self.platform_cls,),
            {"_find_non_ssm_backends": classmethod(lambda cls, vc: [backend])},
        )
        kv_dtype = (
            vc.model_config.dtype
            if cache.cache_dtype == "auto"
            else getattr(torch, cache.cache_dtype, None)
        )
        if attention:
            platform_cls._align_hybrid_block_size(vc, backend)
        specs: dict[str, Any] = {}
        kv_heads = vc.model_config.get_num_kv_heads(vc.parallel_config)
        head_size = vc.model_config.get_head_size()
        spec_cls = self.kv.MLAAttentionSpec if settings["use_mla"] else self.kv.FullAttentionSpec
        extra = {"cache_dtype_str": cache.cache_dtype} if settings["use_mla"] else {}
        attention_spec = None
        for index in attention:
            attention_spec = spec_cls(
                block_size=cache.block_size,
                num_kv_heads=kv_heads,
                head_size=head_size,
                dtype=kv_dtype,
                **extra,
            )
            specs[f"model.layers.{index}.attn"] = attention_spec
        _settle_kda_prefill_backend(setup.layer, vc)
        mamba_spec = setup.layer.get_kv_cache_spec(vc)
        for index in setup.layers:
            specs[f"model.layers.{index}.mixer"] = mamba_spec
        ordered = dict(sorted(specs.items(), key=lambda item: int(item[0].split(".")[2])))
        groups = self.planning["_get_kv_cache_groups_uniform_page_size"](ordered)
        layout = self.layout_module.KVCacheLayout["LBNHC"]
        bytes_per_block = self.planning["_get_kv_cache_bytes_per_block"](groups, layout)
        state_groups = [g for g in groups if isinstance(g.kv_cache_spec, self.kv.MambaSpec)]
        attention_groups = [g for g in groups if g not in state_groups]
        group_size = max(len(g.layer_names) for g in groups)
        held = 1 + mamba_spec.num_speculative_blocks
        planned = math.ceil(mamba_spec.max_memory_usage_bytes(vc) / mamba_spec.page_size_bytes)
        out: dict[str, Any] = {
            "block_size": cache.block_size,
            "mamba_block_size": cache.mamba_block_size,
            "mamba_cache_mode": cache.mamba_cache_mode,
            "enable_prefix_caching": cache.enable_prefix_caching,
            "attention_page_bytes": attention_spec.page_size_bytes if attention_spec else 0,
            "state_page_bytes": mamba_spec.real_page_size_bytes,
            "state_page_bytes_padded": mamba_spec.page_size_bytes,
            "group_size": group_size,
            "state_groups": len(state_groups),
            "attention_groups": len(attention_groups),
            "bytes_per_block": bytes_per_block,
            "state_blocks_per_request": held,
            "planned_blocks_per_request": planned,
            "state_bytes": len(state_groups) * max_num_seqs * held * bytes_per_block,
            "planned_state_bytes": len(state_groups) * max_num_seqs * planned * bytes_per_block,
            "num_prefill_checkpoint_blocks": mamba_spec.num_prefill_checkpoint_blocks,
            "num_speculative_blocks": mamba_spec.num_speculative_blocks,
            "assumptions": list(ASSUMPTIONS["vllm"]),
            "gpu_arch": self.states.platform.arch,
            "backend": "FLASHMLA" if settings["use_mla"] else "FLASH_ATTN",
        }
        if memory is not None:
            # _max_memory_usage_bytes_from_groups (V:kv_cache_planning.py:1253-1285, mirrored):
            # bytes per block times every group's blocks for one request at max_model_len.
            needed = bytes_per_block * sum(
                math.ceil(
                    g.kv_cache_spec.max_memory_usage_bytes(vc) / g.kv_cache_spec.page_size_bytes
                )
                for g in groups
            )
            self.check_memory(memory, lambda: needed, vc.model_config.max_model_len, lambda m: 0)
            num_blocks = memory // bytes_per_block
            kv_config = types.SimpleNamespace(num_blocks=num_blocks, kv_cache_groups=groups)
            out["num_blocks"] = num_blocks
            out["max_concurrency"] = self.concurrency(vc, kv_config)
        else:
            out["num_blocks"] = None
            out["max_concurrency"] = None
        return out


class _Backend:
    """The attention backend as ``_align_hybrid_block_size`` asks it: its kernel block sizes
    (from ``ASSUMPTIONS``) and the base class's identity ``customize_spec``
    (V:vllm/v1/attention/backend.py:141-153)."""

    def __init__(self, sizes: list[Any]) -> None:
        self.sizes = sizes

    def get_supported_kernel_block_sizes(self, kv_cache_spec: Any = None) -> list[Any]:
        return list(self.sizes)

    def customize_spec(self, spec: Any) -> Any:
        return spec

    def is_ssm(self) -> bool:
        return False


def _frozenset_literal(path: Path, name: str) -> frozenset[str]:
    """``NAME = frozenset({...})`` of ``path``, its string members."""
    value = top_level_value(path, name)
    if not isinstance(value, ast.Call) or not value.args:
        raise LookupError(f"{path}: {name} is not frozenset(...)")
    return frozenset(ast.literal_eval(value.args[0]))


def _function_keyword(path: Path, function: str, keyword: str) -> Any:
    """The literal value of keyword argument ``keyword`` of a call inside ``function``."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef) and node.name == function:
            for inner in ast.walk(node):
                if isinstance(inner, ast.keyword) and inner.arg == keyword:
                    return ast.literal_eval(inner.value)
    raise LookupError(f"{path}: {function} has no {keyword}=")


def _class_node(path: Path, name: str) -> ast.ClassDef:
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            return node
    raise LookupError(f"{path}: no class {name}")


def _class_constant(path: Path, cls: str, name: str) -> Any:
    """A literal class attribute ``cls.name`` of ``path``."""
    for item in _class_node(path, cls).body:
        target: ast.expr | None = item.target if isinstance(item, ast.AnnAssign) else None
        if isinstance(item, ast.Assign):
            target = item.targets[0]
        value = getattr(item, "value", None)
        if isinstance(target, ast.Name) and target.id == name and value is not None:
            return ast.literal_eval(value)
    raise LookupError(f"{path}: no {cls}.{name}")


def _literal_names(path: Path, name: str) -> dict[str, str]:
    """``NAME = {"key": ClassName, ...}`` of ``path`` as key -> class name."""
    return names_table(path, name)


def _settle_kda_prefill_backend(layer: Any, vllm_config: Any) -> None:
    """A KDA layer whose ``__init__`` stopped (on the fake torch) before choosing its prefill
    backend gets the one its module's ``resolve_kda_prefill_backend`` chooses, with the
    arguments the constructor passes (V:vllm/models/kimi_k3/nvidia/kda.py:818-830, mirrored:
    ``auto``, the head size, the model dtype, the recurrent state's dtype, the gate's lower
    bound), so that ``get_kv_cache_spec`` exports the checkpoint block FlashKDA does."""
    if isinstance(layer.__dict__.get("kda_prefill_backend"), str):
        return
    resolve = getattr(sys.modules.get(type(layer).__module__), "resolve_kda_prefill_backend", None)
    if resolve is None:
        resolve = type(layer).__init__.__globals__.get("resolve_kda_prefill_backend")
    if resolve is None:
        return
    recurrent_dtype = layer.get_state_dtype()[-1]
    layer.kda_prefill_backend = resolve(
        "auto",
        layer.head_dim,
        vllm_config.model_config.dtype,
        recurrent_dtype,
        layer.__dict__.get("gate_lower_bound"),
    )


# --- SGLang ----------------------------------------------------------------------------------


class _Bag(types.SimpleNamespace):
    """One of SGLang's published config bags (``get_schedule()`` ...): plain fields."""


class SglangReservations:
    """SGLang 0.5.23's state pool for one config, from its wheel (module docstring). One
    ``SglangStates`` per ``--mamba-ssm-dtype``; the configurator's methods are extracted once
    and read the flags of the call in progress through ``self.flags``."""

    def __init__(self, wheels: Wheels) -> None:
        self.wheels = wheels
        self.root = wheels.sglang
        self.states: dict[str | None, SglangStates] = {}
        self.flags: dict[str, Any] = {}
        self.configurator: Any = None
        self._kv_pool: SglangKvPool | None = None

    def __enter__(self) -> SglangReservations:
        return self

    def __exit__(self, *exc: object) -> None:
        for states in self.states.values():
            states.__exit__(*exc)
        self.states.clear()

    @property
    def kv_pool(self) -> SglangKvPool:
        """The KV pool's sizing, for the ``SglangStates`` in use."""
        states = next(iter(self.states.values()))
        if self._kv_pool is None or self._kv_pool.states is not states:
            self._kv_pool = SglangKvPool(states)
        return self._kv_pool

    @functools.cached_property
    def eagle_default_cap(self) -> int:
        """``max_running_requests`` that ``_handle_eagle_family`` declares when speculating
        without one (S:sglang/srt/arg_groups/speculative_hook.py:1072-1094, read)."""
        path = self.root / "sglang/srt/arg_groups/speculative_hook.py"
        return int(_function_keyword(path, "_handle_eagle_family", "max_running_requests"))

    def _strategy(
        self,
        arch: str,
        states: SglangStates,
        strategy: str,
        disable_radix_cache: bool,
        disable_overlap_schedule: bool,
    ) -> tuple[str, bool]:
        """(``--mamba-radix-cache-strategy``, overlap scheduler on) after
        ``_mamba_radix_cache_resolution`` (S:sglang/srt/arg_groups/overrides.py:453-490,
        mirrored, with the wheel's ``_MAMBA_RADIX_CACHE_ARCHS`` and
        ``_MAMBA_EXTRA_BUFFER_ARCHS``, and ``get_linear_attn_spec`` run from the wheel on the
        config object SGLang built), and its checks in ``handle_mamba_radix_cache``
        (S:sglang/srt/arg_groups/model_hook.py:1048-1077, mamba_hook.py:115-163, mirrored):
        auto is extra_buffer where the architecture supports it (triton linear-attention
        backend, not XPU) and the overlap scheduler runs (pages of one token: the page size is
        left at its default), else no_buffer with the overlap scheduler off; Granite uses the
        radix cache where its config object's ``layer_types`` has a ``mamba`` entry; an
        architecture without the radix cache (or with it disabled) refuses the extra-buffer
        strategies and ignores no_buffer; an explicit no_buffer asserts the overlap scheduler
        off (``--disable-overlap-schedule``), an explicit extra buffer the architecture's
        support; the overlap scheduler runs unless that flag turned it off."""
        overlap = not disable_overlap_schedule
        overrides = self.root / "sglang/srt/arg_groups/overrides.py"
        radix = _frozenset_literal(overrides, "_MAMBA_RADIX_CACHE_ARCHS")
        extra = _frozenset_literal(overrides, "_MAMBA_EXTRA_BUFFER_ARCHS")
        hf_config = states.last_model_config.hf_config
        in_branch = arch in radix
        if arch == "GraniteMoeHybridForCausalLM":
            in_branch = any(kind == "mamba" for kind in getattr(hf_config, "layer_types", []))
        # get_linear_attn_spec by the architecture served (a default config names none).
        registry = states.linear_attn_registry
        spec = registry.get_linear_attn_spec_by_arch(arch)
        if spec is None:
            found = registry.get_linear_attn_config(hf_config)
            spec = found[0] if found is not None else None
        uses = (spec is not None and spec.uses_mamba_radix_cache) or in_branch
        if disable_radix_cache or not uses:
            if strategy in ("extra_buffer", "extra_buffer_lazy"):
                raise ValueError(
                    f"--mamba-radix-cache-strategy {strategy} needs mamba state, got {arch}."
                )
            return "no_buffer", overlap
        supports = arch in extra or (spec is not None and spec.support_mamba_cache_extra_buffer)
        if strategy == "auto":
            return ("extra_buffer", True) if supports and overlap else ("no_buffer", False)
        if strategy == "no_buffer":
            if overlap:
                raise AssertionError(
                    "no_buffer do not support overlap schedule. Try to set "
                    "disable_overlap_schedule=True."
                )
            return "no_buffer", False
        if not supports:
            raise AssertionError(f"extra_buffer is not supported for {arch}; use no_buffer.")
        return strategy, overlap

    def _states(self, mamba_ssm_dtype: str | None) -> SglangStates:
        if mamba_ssm_dtype not in self.states:
            for other in self.states.values():
                other.__exit__(None, None, None)
            self.states.clear()
            self.configurator = None
            self.states[mamba_ssm_dtype] = SglangStates(
                self.wheels, mamba_ssm_dtype=mamba_ssm_dtype
            ).__enter__()
        return self.states[mamba_ssm_dtype]

    def _configurator(self, states: SglangStates) -> Any:
        if self.configurator is not None:
            return self.configurator
        runtime = states.runtime
        flags = self.flags

        class Context:
            def override(self, where: str, **fields: Any) -> None:
                for key, value in fields.items():
                    setattr(flags["schedule"], key, value)

        tracking = _function(
            self.root / "sglang/srt/mem_cache/allocation_sizing.py",
            ("get_mamba_tracking_slots",),
            runtime,
        )["get_mamba_tracking_slots"]
        self.configurator = extract_class(
            runtime,
            self.root / "sglang/srt/mem_cache/kv_cache_configurator.py",
            "KVCacheConfigurator",
            [
                "_calculate_mamba_ratio",
                "_handle_max_mamba_cache",
                "resolve_max_num_reqs",
                "_apply_token_constraints",
            ],
            extra={
                "get_schedule": lambda: flags["schedule"],
                "get_parallel": lambda: types.SimpleNamespace(pp_size=1),
                "get_exec": lambda: flags["exec"],
                "get_memory": lambda: flags["memory"],
                "get_spec": lambda: flags["spec"],
                "get_context": Context,
                "get_mamba_tracking_slots": tracking,
                "_pd_prefill_skips_mamba_spec_state": lambda: False,
                "logger": Stub(),
                "envs": types.SimpleNamespace(
                    SGLANG_OPT_MAMBA_SKIP_DECODE_LOCK=types.SimpleNamespace(get=lambda: False)
                ),
            },
        ).cls
        return self.configurator

    def reservation(
        self,
        config: Mapping[str, Any],
        *,
        tp_size: int = 1,
        available_memory: int | None = None,
        max_mamba_cache_size: int | None = None,
        mamba_full_memory_ratio: float = 0.9,
        mamba_radix_cache_strategy: str = "auto",
        disable_radix_cache: bool = False,
        disable_overlap_schedule: bool = False,
        max_running_requests: int | None = None,
        speculative_num_draft_tokens: int = 0,
        mamba_ssm_dtype: str | None = None,
        context_length: int | None = None,
        max_total_tokens: int | None = None,
    ) -> dict[str, Any]:
        """Issue 18's ``sglang_reservation`` fields as SGLang's own code computes them.
        ``available_memory`` is the post-weights budget per rank in bytes (the ``rest``
        ``_handle_max_mamba_cache`` receives, in GiB there)."""
        states = self._states(mamba_ssm_dtype)
        state = states.state(config, tp=tp_size)
        if state.refusal or state.attention_refusal:
            # The model's own head-split assert stops the server as surely as a state refusal.
            return {"refusal": state.refusal or state.attention_refusal}
        if not state.groups:
            return {"refusal": "no recurrent state in SGLang 0.5.23"}
        if (
            available_memory is None
            and max_mamba_cache_size is None
            and not (disable_radix_cache and max_running_requests is not None)
        ):
            return {"refusal": "ValueError: give available_memory or max_mamba_cache_size"}
        arch = (config.get("architectures") or [""])[0]
        try:
            strategy, overlap = self._strategy(
                arch,
                states,
                mamba_radix_cache_strategy,
                disable_radix_cache,
                disable_overlap_schedule,
            )
        except (ValueError, AssertionError) as error:  # SGLang's own refusal of the flag
            return {"refusal": refusal_text(error)}
        extra_buffer = strategy in ("extra_buffer", "extra_buffer_lazy")
        if speculative_num_draft_tokens and max_running_requests is None:
            # _handle_eagle_family resets the cap for speculative decoding.
            max_running_requests = self.eagle_default_cap
        self.flags.update(
            schedule=_Bag(
                max_mamba_cache_size=max_mamba_cache_size,
                max_running_requests=max_running_requests,
                max_total_tokens=max_total_tokens,
                mamba_full_memory_ratio=mamba_full_memory_ratio,
                disable_overlap_schedule=not overlap,
            ),
            exec=_Bag(
                mamba=_Bag(
                    enable_mamba_extra_buffer=extra_buffer,
                    enable_mamba_extra_buffer_lazy=strategy == "extra_buffer_lazy",
                    enable_linear_replayssm_spec=False,
                    linear_replayssm_cache_len=0,
                )
            ),
            memory=_Bag(disable_radix_cache=disable_radix_cache),
            spec=_Bag(speculative_num_draft_tokens=speculative_num_draft_tokens or None),
        )
        try:
            return self._pool(
                states,
                state,
                available_memory=available_memory,
                max_running_requests=max_running_requests,
                draft_tokens=speculative_num_draft_tokens,
                context_length=context_length,
                tp=tp_size,
                architectures=config.get("architectures"),
            )
        except (ValueError, AssertionError) as error:  # SGLang's own startup refusal
            return {"refusal": refusal_text(error)}
        except RuntimeError as error:
            # resolve_max_num_reqs's own refusal of a pool that serves no request
            # (S:sglang/srt/mem_cache/kv_cache_configurator.py:3160-3168).
            if str(error).startswith("Hybrid (mamba/linear-attention) state cache is too small"):
                return {"refusal": refusal_text(error)}
            _debug()
            return {"oracle_gap": refusal_text(error)}
        except Exception as error:
            _debug()
            return {"oracle_gap": refusal_text(error)}

    def _pool(
        self,
        states: SglangStates,
        state: PeerState,
        *,
        available_memory: int | None,
        max_running_requests: int | None,
        draft_tokens: int,
        context_length: int | None,
        tp: int,
        architectures: Sequence[str] | None,
    ) -> dict[str, Any]:
        configurator = self._configurator(states)
        schedule = self.flags["schedule"]
        chosen = states.last_chosen
        common = states.runtime.import_module("sglang.srt.utils.hf_transformers.common")
        # ModelConfig.context_len: --context-length, else get_context_length (S:sglang/srt/
        # utils/hf_transformers/common.py:677-694) of the text config.
        derived = common.get_context_length(
            common.get_hf_text_config(states.last_model_config.hf_config)
        )
        if context_length is not None and context_length > derived:
            # _derive_context_length (S:sglang/srt/configs/model_config.py:1295-1316, mirrored;
            # SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN unset).
            raise ValueError(
                f"User-specified context_length ({context_length}) is greater than the derived "
                f"context_length ({derived})"
            )
        context = context_length or derived
        self_ = object.__new__(configurator)
        self_.__dict__.update(
            mambaish_config=chosen,
            pp_size=1,
            attn_dp_size=1,
            spec_algorithm=types.SimpleNamespace(is_none=lambda: not draft_tokens),
            hybrid_gdn_config=None,
            hybrid_kda_config=None,
            extra_mamba_cache_bytes_per_req=0,
            model_config=types.SimpleNamespace(
                num_hidden_layers=getattr(chosen, "num_hidden_layers", 0), context_len=context
            ),
            fused_entry_bytes=lambda kind: None,
        )
        per_req = chosen.mamba2_cache_params.mamba_cache_per_req
        left_gib = self_._handle_max_mamba_cache((available_memory or 0) / (1 << 30))
        if left_gib <= 0:
            # _profile_available_bytes refuses a budget that leaves nothing for the KV pool
            # (S:sglang/srt/mem_cache/kv_cache_configurator.py:3042-3058, mirrored).
            raise ValueError("Loaded weights leave no GPU memory for the KV cache")
        slots = schedule.max_mamba_cache_size
        kv_bytes = int(left_gib * (1 << 30))
        cell = self.kv_pool.bytes_per_token(states, tp, architectures, draft_tokens)
        # config_from_budget (S:sglang/srt/mem_cache/kv_cache_configurator.py:3192-3228):
        # the pool's tokens, then the user's cap.
        zero_kv_tokens = schedule.max_total_tokens or context
        token_capacity = self_._apply_token_constraints(
            self.kv_pool.tokens(kv_bytes, cell, zero_kv_tokens)
        )
        schedule.max_running_requests = max_running_requests
        cap = self_.resolve_max_num_reqs(token_capacity)
        return {
            "per_request_bytes": per_req,
            "slots": slots,
            "pool_bytes": (slots + 1) * per_req,
            "max_running_requests": cap,
            "mamba_ratio": self_._calculate_mamba_ratio(),
            "speculative_scratch_bytes": _scratch_bytes(state, cap, draft_tokens),
            "kv_cache_bytes": kv_bytes,
            "kv_bytes_per_token": cell,
            "kv_tokens": token_capacity,
            "assumptions": list(ASSUMPTIONS["sglang"]),
        }


def _scratch_bytes(state: PeerState, running: int, draft_tokens: int) -> int:
    """``MambaPool``'s speculative buffers for ``running + 1`` rows (mirrored,
    S:sglang/srt/mem_cache/memory_pool.py:864-965): ``intermediate_ssm_state_cache``
    ``(L, B + 1, D, *temporal)``, and the conv window, deduplicated ``(L, B + 1, dim,
    D + w - 1)`` for a linear chain on CUDA, dense ``(L, B + 1, D, dim, w)`` for KDA."""
    if not draft_tokens:
        return 0
    group = state.groups[0]
    rows = running + 1
    layers = len(group.layer_indices)
    total = 0
    for item in group.tensors:
        itemsize = item.bytes // max(math.prod(item.shape), 1)
        if item.name.startswith("conv"):
            dim, window = item.shape[0], item.shape[-1]
            if group.kind == "kda":
                # KDA's conv state is (window, dim): the dense layout.
                dim, window = item.shape[-1], item.shape[0]
                numel = draft_tokens * dim * window
            else:
                numel = dim * (draft_tokens + window - 1)
            total += layers * rows * numel * itemsize
        else:
            total += layers * rows * draft_tokens * item.bytes
    return total


class SglangKvPool:
    """The tokens SGLang's KV pool holds, from the wheel's own code: ``ModelConfig``'s
    ``_derive_model_shapes``, ``get_total_num_kv_heads`` and ``get_num_kv_heads``
    (S:sglang/srt/configs/model_config.py:1331-1711), ``_get_and_verify_dtype`` (:2284) for the
    auto KV dtype, and ``DefaultPoolConfigurator``'s ``_compute_cell_size`` and
    ``calculate_pool_sizes`` (S:sglang/srt/model_executor/pool_configurator.py:340-634),
    AST-extracted and run on the config object the states were read from, over the mambaish
    config's ``full_attention_layer_ids`` (:226-235, mirrored). Stubbed: one attention-TP group
    of ``tp`` ranks (no DCP, no context parallelism, no DSA layer split), CUDA, no hisparse,
    no NPU offload, no fixed KV-shard scratch (``compute_page_shard_scratch_bytes``, logical
    page sharding off); the zero-KV branch's ``max_total_tokens or context_len`` (:243-248) is
    mirrored with ``--max-total-tokens`` unset."""

    _MODEL_CONFIG_NAMES = (
        "AttentionArch",
        "PURE_MAMBA1_ARCHITECTURES",
        "PURE_SSM_ARCHITECTURES",
        "_hf_arch",
        "_hf_attr",
        "is_deepseek_dsa",
        "is_deepseek_v4",
        "is_qwen4_exp",
        "resolve_spec_hidden_size",
        "get_dsa_index_head_dim",
        "is_minimax_sparse",
        "dsa_layer_skips_topk",
        "get_dsa_index_kpool",
        "compute_mla_mscale_scaling",
        "_STR_DTYPE_TO_TORCH_DTYPE",
        "_get_and_verify_dtype",
    )

    def __init__(self, states: SglangStates) -> None:
        self.states = states
        runtime, root = states.runtime, states.root
        self.parallel = types.SimpleNamespace(
            attn_tp_size=1, attn_dcp_size=1, attn_cp_size=1, enable_dsa_cache_layer_split=False
        )
        self.memory = types.SimpleNamespace(
            enable_hisparse=False,
            enable_unified_cache_external_linker=False,
            enable_hierarchical_cache=False,
        )
        names = _function(
            root / "sglang/srt/configs/model_config.py", self._MODEL_CONFIG_NAMES, runtime
        )
        self.names = names
        self.common = runtime.import_module("sglang.srt.utils.hf_transformers.common")
        # Dots3Config is only an isinstance test in the MLA branch: a class no config is.
        self._serve(
            runtime, "sglang.srt.configs.dots3", {"Dots3Config": type("Dots3Config", (), {})}
        )
        self._serve(
            runtime,
            "sglang.srt.configs.model_config",
            {name: names[name] for name in self._MODEL_CONFIG_NAMES},
        )
        split = _function(
            root / "sglang/srt/layers/cp/utils.py",
            (
                "is_glm_dsa_cache_layer_split_enabled",
                "get_glm_dsa_layer_split_effective_num_layers",
                "get_glm_dsa_cp_layer_shard_info",
                "get_layer_shard_range",
            ),
            runtime,
        )
        effective_layers = split["get_glm_dsa_layer_split_effective_num_layers"]
        effective_layers.__globals__["get_parallel"] = lambda: self.parallel
        self._serve(runtime, "sglang.srt.layers.cp.utils", split)
        qsa = _function(
            root / "sglang/srt/layers/attention/qsa/config.py",
            ("parse_qsa_profile", "_text_config"),
            runtime,
        )
        self._serve(runtime, "sglang.srt.layers.attention.qsa.config", qsa)
        configurator_file = root / "sglang/srt/mem_cache/kv_cache_configurator.py"
        kv_functions = _function(
            configurator_file, ("calculate_mla_kv_cache_dim", "_should_elide_dsa_index_k"), runtime
        )
        # One namespace for both: no disaggregation, CUDA (not HIP or NPU), no hisparse or
        # external cache linker; the DSA kernel backends are left unset, since with a bfloat16
        # KV cache every branch of calculate_mla_kv_cache_dim keeps kv_lora_rank + rope.
        kv_functions["calculate_mla_kv_cache_dim"].__globals__.update(
            is_deepseek_dsa=names["is_deepseek_dsa"],
            get_disagg=lambda: types.SimpleNamespace(disaggregation_mode="null"),
            get_exec=lambda: types.SimpleNamespace(
                kernel=types.SimpleNamespace(dsa_prefill_backend=None, dsa_decode_backend=None)
            ),
            get_memory=lambda: self.memory,
            _is_hip=False,
            _is_npu=False,
            DSATokenToKVPool=self.dsa_pool(runtime, root),
        )
        self._serve(runtime, "sglang.srt.mem_cache.kv_cache_configurator", kv_functions)
        self.model_config = extract_class(
            runtime,
            root / "sglang/srt/configs/model_config.py",
            "ModelConfig",
            [
                "_derive_model_shapes",
                "_init_mla_scaling",
                "get_total_num_kv_heads",
                "get_num_kv_heads",
            ],
            extra={name: names[name] for name in self._MODEL_CONFIG_NAMES},
        ).cls
        element_size = types.SimpleNamespace(_element_size=lambda dtype: dtype.itemsize)
        self.configurator = extract_class(
            runtime,
            root / "sglang/srt/model_executor/pool_configurator.py",
            "DefaultPoolConfigurator",
            [
                "_compute_cell_size",
                "_compute_qsa_cell_size",
                "_compute_dsa_indexer_cell_size",
                "calculate_pool_sizes",
            ],
            extra={
                "torch": types.SimpleNamespace(_utils=element_size),
                "get_parallel": lambda: self.parallel,
                # Compares with torch.float4_e2m1fn_x2: false for the auto KV dtypes.
                "is_float4_e2m1fn_x2": lambda dtype: False,
                "envs": types.SimpleNamespace(
                    SGLANG_NPU_ENABLE_SPARSE_KV_OFFLOAD=types.SimpleNamespace(get=lambda: False)
                ),
                "AttentionArch": names["AttentionArch"],
                "is_deepseek_dsa": names["is_deepseek_dsa"],
                "is_minimax_sparse": names["is_minimax_sparse"],
                "dsa_layer_skips_topk": names["dsa_layer_skips_topk"],
                "get_dsa_index_head_dim": names["get_dsa_index_head_dim"],
                "get_dsa_index_kpool": names["get_dsa_index_kpool"],
                "DSATokenToKVPool": self.dsa_pool(runtime, root),
                "ceil_div": lambda x, y: (x + y - 1) // y,  # utils/common.py:4452-4453
                "get_memory": lambda: self.memory,
                "_is_npu": False,
                # A plain record (the dataclass at :73 holds what it is given).
                "MemoryPoolConfig": types.SimpleNamespace,
            },
        ).cls

    @staticmethod
    def dsa_pool(runtime: Any, root: Path) -> type:
        """``DSATokenToKVPool``'s sizing constants (S:sglang/srt/mem_cache/memory_pool.py:
        5280-5282): ``quant_block_size`` read from the wheel, the uint8 index-K buffer."""
        path = root / "sglang/srt/mem_cache/memory_pool.py"
        return type(
            "DSATokenToKVPool",
            (),
            {
                "quant_block_size": _class_constant(path, "DSATokenToKVPool", "quant_block_size"),
                "index_k_with_scale_buffer_dtype": runtime.torch.uint8,
                "rope_storage_dtype": runtime.torch.bfloat16,
            },
        )

    @staticmethod
    def _serve(runtime: Any, name: str, attributes: Mapping[str, Any]) -> None:
        module = types.ModuleType(name)
        module.__dict__.update(attributes)
        runtime.stubs[name] = module
        sys.modules[name] = module

    def bytes_per_token(
        self,
        states: SglangStates,
        tp: int,
        architectures: Sequence[str] | None,
        draft_tokens: int = 0,
    ) -> int:
        """``_compute_cell_size`` for the config ``states`` read last, on one of ``tp`` ranks,
        and, when speculating (EAGLE/NEXTN, no draft path), the draft's KV that
        ``DefaultPoolConfigurator.__init__`` adds: ``cell x eagle_draft_num_layers / layers``,
        the draft layers being the target's ``num_nextn_predict_layers``
        (S:sglang/srt/model_executor/pool_configurator.py:259-313, non-DSA branch, mirrored;
        model_runner_components/spec_aux_hidden_state.py:171-174).
        ``architectures`` is the file's: transformers keeps it on every config object, which
        the stubbed ``PretrainedConfig`` does not always (a class that takes it by name)."""
        hf_config = states.last_model_config.hf_config
        if getattr(hf_config, "architectures", None) is None:
            hf_config.architectures = list(architectures or [])
        text = self.common.get_hf_text_config(hf_config)
        model = object.__new__(self.model_config)
        model.hf_config, model.hf_text_config, model.is_draft_model = hf_config, text, False
        model._derive_model_shapes()
        self.parallel.attn_tp_size = tp
        kvc = types.SimpleNamespace(
            model_config=model,
            kv_cache_dtype=self.names["_get_and_verify_dtype"](text, "auto"),
            # ModelRunner.use_mla_backend (S:sglang/srt/model_executor/model_runner.py:406).
            use_mla_backend=model.attention_arch == self.names["AttentionArch"].MLA,
            server_args=types.SimpleNamespace(enable_hisparse=False),
            is_draft_worker=False,
            mambaish_config=states.last_chosen,
            layer_info=types.SimpleNamespace(
                start_layer=0, end_layer=int(getattr(text, "num_hidden_layers", 0))
            ),
        )
        pool = object.__new__(self.configurator)
        pool.kv_cache_dtype_str = "auto"
        layers = len(states.last_chosen.full_attention_layer_ids)
        cell = int(pool._compute_cell_size(kvc, layers))
        draft = getattr(model, "num_nextn_predict_layers", None)
        if draft_tokens and draft is not None and int(draft) > 0 and layers > 0:
            cell += int(cell * int(draft) / layers)
        return cell

    def tokens(self, kv_bytes: int, cell: int, zero_kv_tokens: int) -> int:
        """``calculate_pool_sizes(kv_bytes, page_size=1)``'s ``max_total_num_tokens``;
        ``zero_kv_tokens`` is ``max_total_tokens or context_len`` (:243-248, mirrored)."""
        pool = object.__new__(self.configurator)
        pool._cell_size, pool._fixed_overhead_bytes = cell, 0
        pool._zero_kv_max_tokens = zero_kv_tokens
        return int(pool.calculate_pool_sizes(kv_bytes, 1).max_total_num_tokens)


# --- one-shot API ---------------------------------------------------------------------------


def _load(config: Any) -> Mapping[str, Any]:
    if isinstance(config, Mapping):
        return config
    path = Path(config)
    if path.is_dir():
        path = path / "config.json"
    loaded: Mapping[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return loaded


def vllm_reservation(
    config: Any,
    *,
    wheels: Sequence[str] = ("/work/wheels",),
    gpu_arch: str = "sm90",
    **flags: Any,
) -> dict[str, Any]:
    """vLLM 0.33.0's reservation for ``config`` (a mapping or a config.json path) with
    vLLM's flag names (``tensor_parallel_size``, ``max_num_seqs``, ``max_model_len``,
    ``block_size``, ``enable_prefix_caching``, ``num_speculative_tokens``,
    ``mamba_cache_dtype``, ``mamba_ssm_cache_dtype``, ``kv_cache_dtype``,
    ``kv_cache_memory_bytes``)."""
    with VllmReservations(open_wheels(wheels), gpu_arch=gpu_arch) as oracle:
        return oracle.reservation(_load(config), **flags)


def sglang_reservation(
    config: Any, *, wheels: Sequence[str] = ("/work/wheels",), **flags: Any
) -> dict[str, Any]:
    """SGLang 0.5.23's state pool for ``config`` with SGLang's flag names (``tp_size``,
    ``available_memory``, ``max_mamba_cache_size``, ``mamba_full_memory_ratio``,
    ``mamba_radix_cache_strategy``, ``disable_radix_cache``, ``max_running_requests``,
    ``speculative_num_draft_tokens``, ``mamba_ssm_dtype``, ``context_length``)."""
    with SglangReservations(open_wheels(wheels)) as oracle:
        return oracle.reservation(_load(config), **flags)
