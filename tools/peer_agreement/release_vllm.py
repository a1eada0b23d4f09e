"""What one vLLM release reserves for a hybrid model, from that release's own code.

``ReleaseVllm(version).case(config, tp=..., spec=..., prefix_caching=..., budget=...)`` runs,
in the order the server runs them, the release's own (each found in its own tree,
``release_tree.ReleaseTree.defining``):

1. the registry: an architecture the release does not register is refused;
2. the model class's ``get_mamba_state_shape_from_config`` / ``..._dtype_from_config`` (the
   model view of the state), from the file its registry names, bases followed;
3. ``VllmConfig.try_verify_and_update_config``'s hooks: ``MODELS_CONFIG_MAP[arch]`` and, for a
   hybrid, ``HybridAttentionMambaModelConfig.verify_and_update_config``
   (``vllm/model_executor/models/config.py``; the block alignment itself up to 0.19.x); then,
   where the release has it, ``Platform.update_block_size_for_backend`` (0.18 onward; from 0.20
   its ``_align_hybrid_block_size`` aligns);
4. the layers' specs: ``FullAttentionSpec`` / ``MLAAttentionSpec`` per attention layer and
   ``MambaBase.get_kv_cache_spec`` per recurrent layer (its speculative check included), run on
   a stand-in layer whose ``get_state_shape`` / ``get_state_dtype`` answer the model view;
5. ``get_kv_cache_configs`` (``get_kv_cache_config`` in 0.10.2) with the budget, and
   ``get_max_concurrency_for_kv_cache_config``.

Mirrored (the model is not built), each cited where it is made: the recurrent and attention
layer indices per family, MLA's head geometry, the auto model dtype, 0.10.2-0.11.0's spec
construction in ``GPUModelRunner.get_kv_cache_spec``, the attention backend (FlashAttention
``MultipleOf(16)``, FlashMLA ``[64]``) on an SM90 GPU. The layer view of the state (what the
layer's own ``get_state_shape`` allocates) is not run here (``states.py`` runs it for 0.33.0).
"""

from __future__ import annotations

import ast
import math
import traceback
from collections.abc import Mapping
from types import SimpleNamespace as NS
from typing import Any

from .release_code import TORCH, ReleaseCode
from .release_layer import constructed, init_defaults, init_slice, self_reads
from .release_tree import ReleaseTree
from .states import config_view

__all__ = ["ReleaseVllm"]

SHAPE = "get_mamba_state_shape_from_config"
DTYPE = "get_mamba_state_dtype_from_config"
# The backend enum members sizing code names (vllm/v1/attention/backends/registry.py).
MAMBA_TYPES = NS(
    MAMBA1="mamba1",
    MAMBA2="mamba2",
    SHORT_CONV="short_conv",
    LINEAR="linear_attention",
    GDN_ATTN="gdn_attention",
    KDA="kda",
)


PURE_MAMBA = frozenset({"mamba", "falcon_mamba", "mamba2"})


class OracleGap(Exception):
    """The oracle could not run a step of the release (not the release refusing)."""


class ReleaseVllm:
    """One release's sizing code, loaded once (see the module docstring)."""

    def __init__(self, version: str) -> None:
        self.tree = ReleaseTree(version)
        self.version = version
        self.code = ReleaseCode(self.tree)
        ns = self.code.ns
        ns["MambaAttentionBackendEnum"] = MAMBA_TYPES
        ns["AttentionBackendEnum"] = NS(CUTLASS_MLA="CUTLASS_MLA", FLASHINFER="FLASHINFER")
        ns["CUDAGraphMode"] = NS(FULL_AND_PIECEWISE="FULL_AND_PIECEWISE", NONE="NONE")
        ns["current_platform"] = NS(
            # SM90 (CudaPlatform.is_device_capability[_family], vllm/platforms/interface.py):
            # capability 90, family 90.
            is_device_capability=lambda c: (c if isinstance(c, int) else c[0] * 10 + c[1]) == 90,
            is_device_capability_family=lambda c: c // 10 == 9,
            is_xpu=lambda: False,
            is_rocm=lambda: False,
            is_cpu=lambda: False,
            get_cuda_runtime_major=lambda: 13,
            has_device_capability=lambda c: True,
            is_cuda=lambda: True,
            # CudaPlatform adds no spec of its own (Platform.register_custom_kv_cache_specs).
            register_custom_kv_cache_specs=lambda vc: None,
        )
        # The SM90 GPU's capability (CudaPlatform.get_device_capability), as the release's own
        # DeviceCapability (vllm/platforms/interface.py), which layer set-up reads (Kimi K3's
        # FlashKDA choice, vllm-0.29.0:vllm/models/kimi_k3/nvidia/kda.py:176-190).
        capability_file = self.tree.defining("DeviceCapability")
        if capability_file is not None:
            self.code.follow_imports(capability_file, ["DeviceCapability"])
            self.code.load(capability_file, ["DeviceCapability"])
        capability_cls = ns.get("DeviceCapability") or (
            lambda major, minor: NS(major=major, minor=minor)
        )
        ns["current_platform"].get_device_capability = lambda device_id=0: capability_cls(9, 0)
        # Whether FlashInfer's recurrent KDA kernel is installed (vllm/utils/flashinfer.py
        # has_flashinfer_recurrent_kda, 0.30+: process state, not the release's sizing): yes.
        # Kimi K3's prefill backend asks it before the capability, which on SM90 rules FlashInfer
        # out either way ((10, 0) or (10, 3) only, vllm-0.33.0:vllm/models/kimi_k3/nvidia/
        # kda.py:382-400).
        ns["has_flashinfer_recurrent_kda"] = lambda: True
        # vllm/config/cache.py: no handler for the "auto" KV dtype (0.33.0's table).
        ns["get_kv_cache_dtype_handler"] = lambda name: None
        # vllm/envs.py with nothing set: the variables sizing code reads, at their defaults.
        ns["envs"] = NS(
            VLLM_USE_V1=True,
            VLLM_ATTENTION_BACKEND=None,
            VLLM_SSM_CONV_STATE_LAYOUT=None,
            VLLM_KV_CACHE_LAYOUT=None,
        )
        ns["CacheConfig"] = NS(DEFAULT_BLOCK_SIZE=16)
        ns["set_current_vllm_config"] = lambda vc: _null()
        # No layer is built: the forward context's layers (0.18-0.19's backend lookup) are none.
        ns["get_layers_from_vllm_config"] = lambda *args, **kwargs: {}
        self.loaded: dict[str, str] = {}
        for concern, name in (
            ("specs", "MambaSpec"),
            ("groups", "_get_kv_cache_groups_uniform_page_size"),
            ("configs", "get_kv_cache_configs"),
            ("config", "get_kv_cache_config"),
            ("concurrency", "get_max_concurrency_for_kv_cache_config"),
            ("calculators", "MambaStateShapeCalculator"),
            ("spec_registry", "KVCacheSpecRegistry"),
        ):
            where = self.tree.defining(name)
            if where is not None:
                self.loaded[concern] = where
        # Every file holding a concern's definitions runs whole (its classes and functions),
        # kv_cache_utils.py before the planning module that may import from it.
        order = ("spec_registry", "specs", "calculators", "concurrency", "groups", "configs")
        files = [self.loaded[c] for c in order if c in self.loaded]
        for where in dict.fromkeys(files):
            self.code.load(where)
        if self.tree.has("vllm/v1/core/kv_cache_utils.py"):
            self.code.load("vllm/v1/core/kv_cache_utils.py")
            files.append("vllm/v1/core/kv_cache_utils.py")
        for where in dict.fromkeys(files):
            self._load_imported(where)
        self._spec_registration()
        self._hooks()
        self._platform()
        self._mamba_base()
        self._speculative()
        self._layout()

    # -- the release's pieces ---------------------------------------------------------------

    def _load_imported(self, relative: str) -> None:
        """The functions and classes ``relative``'s definitions read that it imports from
        another module of the release (``from vllm.v1.hisparse.layout import
        get_hisparse_kv_cache_groups``, vllm-0.30.0:vllm/v1/core/kv_cache_utils.py:22-27) or
        from Python's standard library (``ReleaseCode.follow_imports``)."""
        self.code.follow_imports(relative)

    def _spec_registration(self) -> None:
        """From 0.23, groups are formed through ``KVCacheSpecRegistry``, filled by
        ``register_all_kvcache_specs`` (``vllm/v1/core/single_type_kv_cache_manager.py``), run
        from the release; the managers it pairs with each spec are not used in sizing and
        stand in as bare classes."""
        relative = self.tree.defining("register_all_kvcache_specs")
        if relative is None:
            return
        node = next(
            n
            for n in ast.parse(self.tree.path(relative).read_text(encoding="utf-8")).body
            if isinstance(n, ast.FunctionDef) and n.name == "register_all_kvcache_specs"
        )
        for name in {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}:
            if name.endswith("Manager") and name not in self.code.ns:
                self.code.ns[name] = type(name, (), {})
        self.code.load(relative, ["register_all_kvcache_specs"])

    def _hooks(self) -> None:
        relative = "vllm/model_executor/models/config.py"
        self.hooks_file = relative if self.tree.has(relative) else None
        self.hook_map: dict[str, str] = {}
        if self.hooks_file is None:
            return
        self.code.load(relative)
        for node in ast.parse(self.tree.path(relative).read_text(encoding="utf-8")).body:
            target = getattr(node, "target", None) or (
                node.targets[0] if isinstance(node, ast.Assign) else None
            )
            value = getattr(node, "value", None)
            if getattr(target, "id", None) == "MODELS_CONFIG_MAP" and isinstance(value, ast.Dict):
                for key, item in zip(value.keys, value.values, strict=True):
                    if isinstance(key, ast.Constant):
                        self.hook_map[key.value] = ast.unparse(item)

    def _platform(self) -> None:
        relative = self.tree.defining("Platform", method="update_block_size_for_backend")
        self.platform_file = relative
        self.platform: Any = None
        if relative is None:
            return
        node = self.tree.class_node(relative, "Platform")
        assert node is not None
        methods = [item.name for item in node.body if isinstance(item, ast.FunctionDef)]
        self.platform = self.code.class_with(relative, "Platform", methods, "ReleasePlatform")
        if "is_device_capability" not in methods:
            self.platform.is_device_capability = classmethod(lambda cls, c: False)
        if "get_kv_cache_config_builder_cls" in methods:
            # CudaPlatform keeps Platform's builder (vllm-0.33.0:vllm/platforms/
            # interface.py:1474-1493; cuda.py does not override it).
            self.code.ns[
                "current_platform"
            ].get_kv_cache_config_builder_cls = self.platform.get_kv_cache_config_builder_cls

    def _mamba_base(self) -> None:
        relative = self.tree.defining("MambaBase", method="get_kv_cache_spec")
        self.mamba_base_file = relative
        self.mamba_base: Any = None
        if relative is not None:
            node = self.tree.class_node(relative, "MambaBase")
            assert node is not None
            names = [i.name for i in node.body if isinstance(i, ast.FunctionDef)]
            self.code.load(
                relative, [n for n in _top_names(self.tree, relative) if n != "MambaBase"]
            )
            self.mamba_base = self.code.class_with(relative, "MambaBase", names, "ReleaseMambaBase")
            # The module's own functions name the class (get_layers_from_vllm_config(vllm_config,
            # MambaBase), vllm-0.33.0:vllm/model_executor/layers/mamba/abstract.py:98-115):
            # the release's class, as made here.
            self.code.ns.setdefault("MambaBase", self.mamba_base)

    def _speculative(self) -> None:
        """``SpeculativeConfig``'s own predicates (``use_multi_module_mtp``, 0.28 on:
        ``get_kv_cache_configs`` asks it, vllm-0.28.0:vllm/v1/core/kv_cache_utils.py:2137-2142;
        ``use_eagle``, 0.29: ``_annotate_eagle_groups``, vllm-0.29.0:vllm/v1/core/
        kv_cache_utils.py:1843-1845), every public method of the release's class, run on the
        stand-in speculative config; the class itself (its ``__post_init__`` builds the draft
        model) is not."""
        relative = self.tree.defining("SpeculativeConfig", method="use_multi_module_mtp")
        self.speculative_cls: Any = None
        if relative is not None:
            node = self.tree.class_node(relative, "SpeculativeConfig")
            assert node is not None
            plain = ("property", "staticmethod", "classmethod")
            names = [
                item.name
                for item in node.body
                if isinstance(item, ast.FunctionDef)
                and not item.name.startswith("_")
                and all(ast.unparse(d) in plain for d in item.decorator_list)
            ]
            self.speculative_cls = self.code.class_with(
                relative, "SpeculativeConfig", names, "ReleaseSpeculativeConfig"
            )
            # The class's fields at their declared constant defaults
            # (``disable_eagle_block_drop: bool = False``, vllm-0.30.0:vllm/config/
            # speculative.py:440), what a launch that sets none of them gets.
            for field_name, value in _field_defaults(node).items():
                setattr(self.speculative_cls, field_name, value)

    def _layout(self) -> None:
        """From 0.29 the KV cache has a physical layout, resolved once by the engine core
        before the KV cache is planned (``resolve_kv_cache_layout``, vllm-0.29.0:vllm/v1/
        engine/core.py:286-293) and read back through ``CacheConfig
        .get_resolved_kv_cache_layout``: the release's own ``KVCacheLayout``,
        ``_layout_from_name``, ``get_supported_kv_cache_layouts``, ``resolve_kv_cache_layout``
        and ``get_kv_connector_cache_layout`` are loaded from the files that define them."""
        self.resolve_layout = self.tree.defining("resolve_kv_cache_layout")
        if self.resolve_layout is None:
            return
        for name in ("KVCacheLayout", "_layout_from_name", "get_kv_connector_cache_layout"):
            where = self.tree.defining(name)
            if where is not None:
                self.code.load(where)
        if self.tree.has("vllm/v1/kv_cache_layout.py"):
            self.code.load("vllm/v1/kv_cache_layout.py")
        cache_file = self.tree.defining("CacheConfig", method="get_resolved_kv_cache_layout")
        self.resolved_layout_method: Any = None
        if cache_file is not None:
            self.code.load(cache_file, [n for n in _assigned(self.tree, cache_file)])
            self.code.load(cache_file, ["_layout_from_name"])
            self.resolved_layout_method = self.code.class_with(
                cache_file,
                "CacheConfig",
                ["get_resolved_kv_cache_layout"],
                "ReleaseCacheConfigLayout",
            ).get_resolved_kv_cache_layout
        self.code.load(
            self.resolve_layout,
            [
                *_assigned(self.tree, self.resolve_layout),
                "_layout_names",
                "get_supported_kv_cache_layouts",
                "resolve_kv_cache_layout",
            ],
        )

    def _resolve_layout(self, vc: Any, specs: Mapping[str, Any]) -> None:
        """The engine core's layout resolution, run as the release runs it: every worker
        reports ``get_supported_kv_cache_layouts`` of its backends (FlashAttention,
        FlashAttention-MLA and the Mamba backends declare none: ``AttentionBackend
        .supported_kv_cache_layouts`` returns None, vllm-0.29.0:vllm/v1/attention/
        backend.py:350-354, so the release's default preference applies); one worker per TP
        rank, all alike."""
        if self.resolve_layout is None or self.resolved_layout_method is None:
            return
        ns = self.code.ns
        cache = vc.cache_config
        cache.get_resolved_kv_cache_layout = lambda: self.resolved_layout_method(cache)
        backend = NS(supported_kv_cache_layouts=lambda: None)
        names = [layout.name for layout in ns["get_supported_kv_cache_layouts"]([backend])]
        tp = vc.parallel_config.tensor_parallel_size
        ns["resolve_kv_cache_layout"](vc, [list(names) for _ in range(tp)], list(specs.values()))

    def _model_class(self, file: str, cls: str, seen: frozenset[str] = frozenset()) -> Any:
        """The model class's state classmethods (and its other class/static methods they
        call), from the class of the release's file that defines each, bases followed. A model
        class the methods name (Kimi K3's delegate to ``KimiLinearForCausalLM`` of the same
        file, vllm-0.28.0:vllm/models/kimi_k3/nvidia/model.py:2091-2105) is made the same way
        from the release's own definition, where the owner's file defines or imports it, and
        bound under its name."""
        owners = {method: self.tree.method_owner(file, cls, method) for method in (SHAPE, DTYPE)}
        if owners[SHAPE] is None or owners[DTYPE] is None:
            return None
        seen = seen | {cls}
        self.model_files.extend([file, owners[SHAPE][0], owners[DTYPE][0]])
        self.code.load(owners[SHAPE][0], _functions(self.tree, owners[SHAPE][0]))
        methods: dict[str, Any] = {}
        for owner_file, owner_cls in {owners[SHAPE], owners[DTYPE]}:  # type: ignore[misc]
            node = self.tree.class_node(owner_file, owner_cls)
            assert node is not None
            names = [
                item.name
                for item in node.body
                if isinstance(item, ast.FunctionDef)
                and any(
                    ast.unparse(d) in ("classmethod", "staticmethod") for d in item.decorator_list
                )
            ]
            self.code.load(owner_file, _functions(self.tree, owner_file))
            for named in sorted(_names_in(node, names) - seen - {owner_cls}):
                if self.tree.class_node(owner_file, named) is None and (
                    self.tree.import_source(owner_file, named) is None
                ):
                    continue
                delegate = self._model_class(owner_file, named, seen)
                if delegate is not None:
                    self.code.ns[named] = delegate
            made = self.code.class_with(owner_file, owner_cls, names, f"Model_{owner_cls}")
            methods.update({n: made.__dict__[n] for n in names})
        return type("ReleaseModel", (), methods)

    def _supports_prefix_caching(self, file: str, cls: str) -> bool:
        """Whether the registered class derives from ``SupportsMambaPrefixCaching`` (its bases
        in the release's file, what ``ModelConfig.supports_mamba_prefix_caching`` reads)."""
        return self._derives(file, cls, "SupportsMambaPrefixCaching")

    def _derives(self, file: str, cls: str, interface: str) -> bool:
        """Whether the registered class names ``interface`` among its bases."""
        node = self.tree.class_node(file, cls)
        return node is not None and any(interface in ast.unparse(base) for base in node.bases)

    # -- one case ------------------------------------------------------------------------------

    def case(
        self,
        mapping: Mapping[str, Any],
        *,
        tp: int,
        spec: int,
        prefix_caching: bool,
        budget: int,
        max_model_len: int,
    ) -> dict[str, Any]:
        """The release's answer for one case: ``state`` (the model view) and the reservation's
        fields, or ``refusal`` (the release's own), or ``oracle_gap``."""
        self.code.log.lines.clear()
        # No layer is built unless this case builds one (``_build_layer``).
        self.code.ns["get_layers_from_vllm_config"] = lambda *args, **kwargs: {}
        try:
            return self._case(mapping, tp, spec, prefix_caching, budget, max_model_len)
        except OracleGap as gap:
            return {"oracle_gap": str(gap)}
        except (ValueError, AssertionError, NotImplementedError, ZeroDivisionError) as error:
            return {"refusal": f"{type(error).__name__}: {error}", "where": _where(error)}
        except Exception as error:
            return {"oracle_gap": f"{type(error).__name__}: {error}", "where": _where(error)}

    def _case(
        self,
        mapping: Mapping[str, Any],
        tp: int,
        spec: int,
        prefix_caching: bool,
        budget: int,
        max_model_len: int,
    ) -> dict[str, Any]:
        arch = (mapping.get("architectures") or [None])[0]
        entry = self.tree.registry.get(arch)
        if entry is None:
            return {
                "refusal": f"vLLM {self.version} does not register {arch}",
                "where": self.tree.cite("vllm/model_executor/models/registry.py"),
            }
        file = self.tree.model_file(entry[0])
        self.model_files: list[str] = []
        model = self._model_class(file, entry[1]) if self.tree.has(file) else None
        if model is None:
            return {"refusal": f"{arch}: no recurrent state classmethods in vLLM {self.version}"}
        hf = config_view(mapping)
        text = getattr(hf, "text_config", None) or hf
        heads = getattr(text, "num_attention_heads", None)
        if isinstance(heads, int) and heads % tp:
            # ModelConfig.verify_with_parallel_config, mirrored (the model is not built).
            where = self.tree.defining("ModelConfig", method="verify_with_parallel_config")
            return {
                "refusal": f"Total number of attention heads ({heads}) must be divisible by "
                f"tensor parallel size ({tp}).",
                "where": self.tree.cite(where, "ModelConfig.verify_with_parallel_config")
                if where
                else "",
            }
        family = str(getattr(text, "model_type", None) or getattr(hf, "model_type", ""))
        recurrent, attention, mamba_type = layers_of(family, text)
        use_mla = getattr(text, "kv_lora_rank", None) is not None
        vc = self._vllm_config(hf, text, arch, tp, spec, prefix_caching, max_model_len, family)
        vc.model_config.supports_mamba_prefix_caching = self._supports_prefix_caching(
            file, entry[1]
        )
        # ModelConfig.supports_kv_cache_grouping (0.33: the model info's flag, whether the
        # class implements SupportsKVCacheGrouping, vllm-0.33.0:vllm/config/model.py:2056-2057),
        # read from the registered class's bases as above.
        vc.model_config.supports_kv_cache_grouping = self._derives(
            file, entry[1], "SupportsKVCacheGrouping"
        )
        # The current config (vllm/config/vllm.py's context), as the spec registry reads it.
        self.code.ns["get_current_vllm_config_or_none"] = lambda: vc
        self.code.ns["get_current_vllm_config"] = lambda: vc
        # ModelRegistry.resolve_model_cls, as the hooks call it: the class being sized.
        self.code.ns["ModelRegistry"] = NS(
            resolve_model_cls=lambda *a, **k: (model, arch), _normalize_arch=lambda a, *r: a
        )
        cache = vc.cache_config
        # VllmConfig.try_verify_and_update_config: the architecture's own hook first (dtype
        # defaults such as NemotronH's and Qwen3.5's), then the hybrid hook.
        hook = self.hook_map.get(arch)
        if hook is not None and hook in self.code.ns:
            self.code.ns[hook].verify_and_update_config(vc)
        shapes = [tuple(s) for s in model.get_mamba_state_shape_from_config(vc)]
        dtypes = list(model.get_mamba_state_dtype_from_config(vc))
        state = {
            "shapes": [list(s) for s in shapes],
            "dtypes": [d.name for d in dtypes],
            "bytes": sum(math.prod(s) * d.itemsize for s, d in zip(shapes, dtypes, strict=True)),
        }
        if vc.model_config.is_hybrid:
            self.code.ns["HybridAttentionMambaModelConfig"].verify_and_update_config(vc)
        if cache.block_size is None:
            cache.block_size = 16  # CudaPlatformBase.check_and_update_config: 16 when unset
        built = None
        if self.mamba_base is not None:
            names = tuple(f"model.layers.{i}.mixer" for i in recurrent) or ("model.layers.0.mixer",)
            built = self._build_layer(vc, shapes, dtypes, mamba_type, text, names)
        if self.platform is not None:
            self._update_block_size(vc, use_mla)
        kv_dtype = vc.model_config.dtype
        specs: dict[str, Any] = {}
        kv = self.code.ns
        for index in attention:
            # The MLA layer passes no head_size_v (vllm-0.12.0:vllm/attention/layer.py:756,
            # vllm-0.28.0:vllm/model_executor/layers/attention/mla_attention.py:1146-1169):
            # from 0.28 the spec's default, 0, is what merge rebuilds it with.
            values = {} if use_mla else {"head_size_v": _head_size(text, use_mla)}
            specs[f"model.layers.{index}.attn"] = _make(
                kv["MLAAttentionSpec" if use_mla else "FullAttentionSpec"],
                block_size=cache.block_size,
                num_kv_heads=1 if use_mla else max(1, _kv_heads(text) // tp),
                head_size=_head_size(text, use_mla),
                **values,
                dtype=kv_dtype,
                use_mla=use_mla,
                cache_dtype_str="auto",
            )
        mamba_spec = self._mamba_spec(
            vc,
            shapes,
            dtypes,
            mamba_type,
            spec,
            prefix_caching,
            built,
        )
        for index in recurrent:
            specs[f"model.layers.{index}.mixer"] = mamba_spec
        ordered = dict(sorted(specs.items(), key=lambda item: int(item[0].split(".")[2])))
        self._resolve_layout(vc, ordered)
        if "get_global_kv_cache_groups" in kv:
            # 0.33: EngineCore._initialize_kv_caches forms the groups once, then plans
            # (vllm-0.33.0:vllm/v1/engine/core.py:292-323).
            global_groups = kv["get_global_kv_cache_groups"](vc, [ordered])
            kv_config = kv["get_kv_cache_configs"](vc, [ordered], [budget], global_groups)[0]
        elif "get_kv_cache_configs" in kv:
            kv_config = kv["get_kv_cache_configs"](vc, [ordered], [budget])[0]
        else:
            kv_config = kv["get_kv_cache_config"](vc, ordered, budget)
        groups = kv_config.kv_cache_groups
        mamba_groups = [g for g in groups if type(g.kv_cache_spec).__name__ == "MambaSpec"]
        attention_groups = [g for g in groups if g not in mamba_groups]
        page = mamba_groups[0].kv_cache_spec if mamba_groups else mamba_spec
        block = (
            attention_groups[0].kv_cache_spec.block_size if attention_groups else cache.block_size
        )
        return {
            "state": state,
            "block_size": block,
            "state_page_bytes": page.real_page_size_bytes
            if hasattr(page, "real_page_size_bytes")
            else None,
            "state_page_bytes_padded": page.page_size_bytes,
            "group_size": max(len(g.layer_names) for g in groups),
            "state_groups": len(mamba_groups),
            "attention_groups": len(attention_groups),
            "planned_blocks_per_request": math.ceil(
                page.max_memory_usage_bytes(vc) / page.page_size_bytes
            ),
            "num_blocks": kv_config.num_blocks,
            "max_concurrency": kv["get_max_concurrency_for_kv_cache_config"](vc, kv_config),
            "mamba_cache_mode": getattr(cache, "mamba_cache_mode", None),
            "enable_prefix_caching": cache.enable_prefix_caching,
        }

    def _vllm_config(
        self,
        hf: Any,
        text: Any,
        arch: str,
        tp: int,
        spec: int,
        prefix_caching: bool,
        max_model_len: int,
        family: str,
    ) -> Any:
        dtype = _model_dtype(hf, text)
        model_config = NS(
            dtype=dtype,
            max_model_len=max_model_len,
            original_max_model_len=max_model_len,
            use_mla=getattr(text, "kv_lora_rank", None) is not None,
            architecture=arch,
            architectures=[arch],
            hf_config=hf,
            hf_text_config=text,
            # IsHybrid: every family here but the pure Mamba ones (their model classes' bases).
            is_hybrid=family not in PURE_MAMBA,
            is_attention_free=family in PURE_MAMBA,
            model=arch,
            runner_type="generate",
            convert_type="none",
            supports_mamba_prefix_caching=True,
            get_mamba_chunk_size=lambda: getattr(
                text, "mamba_chunk_size", getattr(text, "chunk_size", None)
            ),
            # MLA decodes as MQA: one KV head (vllm-0.19.1:vllm/config/model.py:1217-1221).
            get_num_kv_heads=lambda parallel: (
                1
                if getattr(text, "kv_lora_rank", None) is not None
                else max(1, _kv_heads(text) // tp)
            ),
            get_head_size=lambda: _head_size(text, getattr(text, "kv_lora_rank", None) is not None),
        )
        newer = self.platform is not None
        cache_config = NS(
            block_size=16 if newer else None,
            user_specified_block_size=False,
            cache_dtype="auto",
            mamba_page_size_padded=None,
            mamba_cache_dtype="auto",
            mamba_ssm_cache_dtype="auto",
            enable_prefix_caching=prefix_caching,
            mamba_block_size=None,
            user_specified_mamba_block_size=False,
            mamba_cache_mode="none",
            calculate_kv_scales=False,
            num_gpu_blocks_override=None,
            kv_cache_memory_bytes=None,
            kv_cache_dtype_skip_layers=None,
            use_replayssm=False,
            use_kda_recoverssm=False,
            kv_sharing_fast_prefill=False,
            kv_cache_layout=None,
            # 0 with nothing set (vllm-0.29.0:vllm/config/cache.py:60-66,156-158; a plain
            # ``Field(default=0)`` from 0.30, vllm-0.30.0:vllm/config/cache.py:148).
            prefix_cache_retention_interval=0,
            # No prefix-cache key unit unless asked (``Field(default=None)``, vllm-0.33.0:vllm/
            # config/cache.py:203; read by get_mamba_prefill_checkpoint_grid, vllm-0.33.0:vllm/
            # model_executor/layers/mamba/abstract.py:116-130).
            prefix_match_unit=None,
        )
        # CacheConfig.get_resolved_kv_cache_layout: the NHD default, not block-outermost.
        cache_config.get_resolved_kv_cache_layout = lambda: NS(is_block_outermost=False)
        speculative = NS(num_speculative_tokens=spec, method="mtp") if spec else None
        if speculative is not None and self.speculative_cls is not None:
            # An MTP draft is the target's own checkpoint (SpeculativeConfig.__post_init__:
            # ``self.model = self.target_model_config.model``, vllm-0.28.0:vllm/config/
            # speculative.py:759-766) read through ``hf_config_override``, which keeps the
            # config's ``num_nextn_predict_layers`` (speculative.py:342-640): the draft's
            # hf_config answers it as the target's does.
            made_spec = self.speculative_cls()
            made_spec.__dict__.update(
                vars(speculative), draft_model_config=NS(hf_config=hf, hf_text_config=text)
            )
            speculative = made_spec
        made = NS(
            model_config=model_config,
            cache_config=cache_config,
            parallel_config=NS(
                tensor_parallel_size=tp,
                pipeline_parallel_size=1,
                decode_context_parallel_size=1,
                prefill_context_parallel_size=1,
                data_parallel_size=1,
            ),
            compilation_config=NS(cudagraph_mode=None),
            # AttentionConfig: no HiSparse unless asked (vllm-0.30.0:vllm/config/attention.py:89).
            attention_config=NS(backend=None, hisparse_config=None),
            scheduler_config=NS(
                disable_hybrid_kv_cache_manager=False,
                enable_chunked_prefill=True,
                max_num_seqs=256,
                max_num_batched_tokens=8192,
            ),
            speculative_config=speculative,
            num_speculative_tokens=spec,
            num_prefill_lookahead_tokens=spec,
            kv_transfer_config=None,
            additional_config={},
        )

        def with_hf_config(hf_config: Any, architectures: Any = None) -> Any:
            # VllmConfig.with_hf_config: a copy whose model config holds hf_config.
            copied = NS(**vars(made))
            copied.model_config = NS(**{**vars(model_config), "hf_config": hf_config})
            return copied

        made.with_hf_config = with_hf_config
        return made

    def _update_block_size(self, vc: Any, use_mla: bool) -> None:
        """``Platform.update_block_size_for_backend`` with SM90's first attention backend:
        FlashAttention-MLA for MLA (first in SM90's MLA order, vllm-0.20.0:vllm/platforms/
        cuda.py:119-126; ``[MultipleOf(16)]``, v1/attention/backends/mla/flashattn_mla.py:52-53),
        else FlashAttention (``[MultipleOf(16)]``)."""
        multiple_of = self.code.ns["MultipleOf"]
        sizes = [multiple_of(16)]
        backend = NS(
            get_supported_kernel_block_sizes=lambda *a: list(sizes),
            get_name=lambda: "FLASH_ATTN_MLA" if use_mla else "FLASH_ATTN",
            get_preferred_block_size=lambda default=16, *a: default,
            is_ssm=lambda: False,
            customize_spec=lambda spec: spec,
            supports_block_size=lambda size: size % 16 == 0,
        )
        platform = self.platform
        platform._find_non_ssm_backend = classmethod(lambda cls, vc: backend)
        platform._find_non_ssm_backends = classmethod(lambda cls, vc: [backend])
        platform.update_block_size_for_backend(vc)

    def _layer_class(self, mamba_type: str, vc: Any, text: Any) -> tuple[Any, str, str] | None:
        """The release's recurrent layer class the model builds, where it overrides
        ``MambaBase.get_kv_cache_spec`` (``MambaMixer2`` plans a prefill checkpoint block from
        0.32, vllm-0.32.0:vllm/model_executor/layers/mamba/mamba_mixer2.py:1098-1108; Kimi K3's
        KDA layer from 0.29, vllm-0.29.0:vllm/models/kimi_k3/nvidia/kda.py:594-600), found two
        ways in the model's files: the classes they define or import whose ``mamba_type`` is
        the layers' (``MambaAttentionBackendEnum.X``), and the recurrent layer classes they
        construct under guards not false for this config (``release_layer.constructed``: Kimi
        K3's ``KimiK3DeltaAttention``, whose ``mamba_type`` is its base's ``GDN_ATTN``,
        vllm-0.29.0:vllm/model_executor/layers/mamba/gdn/base.py:49-51, built when
        ``use_full_rank_gate`` is set, vllm-0.29.0:vllm/models/kimi_k3/nvidia/
        model.py:888-907). One override: (the class made from the override's methods and the
        methods and properties of its class they read, with the release's ``MambaBase`` as its
        base, its ``super()``; the class's file; the class's name), else None (``MambaBase``'s
        own)."""
        found: set[tuple[str, str]] = set()

        def overriding(file: str, name: str) -> tuple[str, str] | None:
            source = file if self.tree.class_node(file, name) else None
            source = source or self.tree.import_source(file, name)
            if source is None or self.tree.class_node(source, name) is None:
                return None
            if self.tree.method_owner(source, name, "mamba_type") is None:
                return None
            owner = self.tree.method_owner(source, name, "get_kv_cache_spec")
            return owner if owner is not None and owner[1] != "MambaBase" else None

        for file in dict.fromkeys(self.model_files):
            if not self.tree.has(file):
                continue
            for name in _class_names(self.tree, file):
                typed = None
                source = file if self.tree.class_node(file, name) else None
                source = source or self.tree.import_source(file, name)
                if source is not None and self.tree.class_node(source, name) is not None:
                    typed = self.tree.method_owner(source, name, "mamba_type")
                if typed is None or _returned_type(self.tree, *typed) != mamba_type:
                    continue
                owner = overriding(file, name)
                if owner is not None:
                    found.add(owner)
        # The constructing function's parameters: the text config (the decoder layers get
        # ``hf_text_config``, vllm-0.29.0:vllm/models/kimi_k3/nvidia/model.py:1129) and the
        # VllmConfig stand-in.
        params = {"config": text, "vllm_config": vc}
        built = constructed(
            self.tree,
            self.model_files,
            lambda file, name: _source(self.tree, file, name) if overriding(file, name) else None,
            params,
            self.code.ns,
        )
        for source, name in built:
            owner = self.tree.method_owner(source, name, "get_kv_cache_spec")
            if owner is not None:
                found.add(owner)
        if len(found) != 1:
            return None
        owner_file, owner_cls = found.pop()
        key = f"Layer_{owner_cls}"
        if key not in self.code.ns:
            self.code.follow_imports(owner_file, [owner_cls])
            node = self.tree.class_node(owner_file, owner_cls)
            assert node is not None
            methods = {i.name: i for i in node.body if isinstance(i, ast.FunctionDef)}
            names: set[str] = {
                n for n in ("get_kv_cache_spec", "get_prefill_checkpoint_alignment") if n in methods
            }
            # The methods and properties of the class the override reads (``self
            # ._exports_checkpoints``, a cached property, vllm-0.33.0:vllm/model_executor/
            # layers/mamba/gdn/qwen_gdn_linear_attn.py:739-759), transitively.
            pending = list(names)
            while pending:
                for attr in self_reads(methods[pending.pop()]):
                    if attr in methods and attr not in names and attr != "__init__":
                        names.add(attr)
                        pending.append(attr)
            self.code.ns.setdefault("ReleaseMambaBase", self.mamba_base)
            self.code.class_with(
                owner_file,
                owner_cls,
                [n for n in methods if n in names],
                key,
                bases=["ReleaseMambaBase"],
            )
        return self.code.ns[key], owner_file, owner_cls

    def _init_attributes(
        self, layer: Any, owner: tuple[str, str], vc: Any, text: Any, prefix: str
    ) -> None:
        """Set on ``layer`` the attributes its override reads that its class's ``__init__``
        sets (``self.kda_prefill_backend = resolve_kda_prefill_backend(backend, self.head_dim,
        vllm_config.model_config.dtype, self.gate_lower_bound)``, vllm-0.29.0:vllm/models/
        kimi_k3/nvidia/kda.py:511-531), by running the release's own statements they depend
        on (``release_layer.init_slice``, bases' ``__init__`` first), with ``config`` the text
        config, ``vllm_config`` the stand-in, ``prefix`` the layer's name and other parameters
        at their defaults. An attribute that cannot be computed so stays unset: the override's
        AttributeError is an oracle gap."""
        file, cls = owner
        node = self.tree.class_node(file, cls)
        assert node is not None
        made = type(layer)
        wanted: set[str] = set()
        for item in node.body:
            if isinstance(item, ast.FunctionDef) and item.name in made.__mro__[1].__dict__:
                wanted |= self_reads(item)
        wanted = {a for a in wanted if not hasattr(made, a)}
        if not wanted:
            return
        skip = {a for a in dir(made) if not a.startswith("__")}
        self._run_slice(
            layer,
            file,
            cls,
            wanted,
            skip,
            (),
            {"config": text, "vllm_config": vc, "prefix": prefix},
        )

    def _sliced_class(self, relative: str, cls: str) -> Any:
        """A stand-in for class ``cls`` of ``relative``: called with its ``__init__``'s
        arguments, it gives an object each of whose attributes is computed, on first read, by
        the release's own statements of that ``__init__`` it depends on."""
        oracle = self

        def make(*args: Any, **kwargs: Any) -> Any:
            class Sliced:
                def __getattr__(self, name: str) -> Any:
                    if name.startswith("__"):
                        raise AttributeError(name)
                    oracle._run_slice(self, relative, cls, {name}, set(), args, kwargs)
                    return self.__dict__[name]

            Sliced.__name__ = Sliced.__qualname__ = f"Sliced_{cls}"
            return Sliced()

        return make

    def _run_slice(
        self,
        instance: Any,
        relative: str,
        cls: str,
        wanted: set[str],
        skip: set[str],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> None:
        """Run on ``instance`` the statements of ``cls``'s ``__init__`` (bases first) that
        ``self.X`` for X in ``wanted`` depend on, its parameters bound to ``args`` /
        ``kwargs`` and, otherwise, to their defaults."""
        defaults = init_defaults(self.tree, relative, cls)
        for where, statements, params in init_slice(self.tree, relative, cls, wanted, skip):
            scope = self._file_scope(where, statements)
            for name, expr in defaults.items():
                try:
                    scope[name] = eval(
                        compile(ast.Expression(expr), "<default>", "eval"), dict(self.code.ns)
                    )
                except Exception:
                    continue
            named = [p for p in params if p != "self"]
            scope.update(dict(zip(named, args, strict=False)))
            scope.update({k: v for k, v in kwargs.items() if k in params})
            scope["self"] = instance
            module = ast.fix_missing_locations(ast.Module(body=statements, type_ignores=[]))
            exec(compile(module, f"vllm-{self.version}:{where}", "exec", dont_inherit=True), scope)

    def _file_scope(self, relative: str, statements: list[ast.stmt]) -> dict[str, Any]:
        """A namespace for ``statements`` of ``relative``: this release's shared one, plus the
        top-level definitions of ``relative`` they read (``resolve_kda_prefill_backend`` and
        ``is_flashkda_supported`` of vllm-0.29.0:vllm/models/kimi_k3/nvidia/kda.py:176-316),
        executed into a copy so that a same-named definition of another file stays as it is,
        and what those import, loaded from the release (``ReleaseCode.follow_imports``)."""
        scope = dict(self.code.ns)
        nodes = {
            name: node
            for node in self.tree._tree(relative).body
            if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.Assign, ast.AnnAssign))
            for name in _defined_names(node)
        }
        reads = {
            n.id
            for stmt in statements
            for n in ast.walk(stmt)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
        }
        self.code.follow_imports(relative, [])
        done: set[str] = set()
        while True:
            own = sorted((reads & set(nodes)) - done)
            if not own:
                break
            done.update(own)
            self.code.follow_imports(relative, own)
            for name in own:
                node = nodes[name]
                reads |= {
                    n.id
                    for n in ast.walk(node)
                    if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
                }
            for key, value in self.code.ns.items():
                scope.setdefault(key, value)
            for node in dict.fromkeys(nodes[name] for name in own):
                module = ast.fix_missing_locations(ast.Module(body=[node], type_ignores=[]))
                try:
                    exec(
                        compile(
                            module,
                            f"vllm-{self.version}:{relative}",
                            "exec",
                            flags=__import__("__future__").annotations.compiler_flag,
                            dont_inherit=True,
                        ),
                        scope,
                    )
                except Exception as error:
                    self.code.failed.append((f"{relative}:{node.lineno}", repr(error)))
                    if isinstance(node, ast.ClassDef):
                        # A class whose bases or decorators are not here (``ChunkGatedDeltaRule
                        # (CustomOp)``, vllm-0.33.0:vllm/model_executor/layers/mamba/gdn/
                        # qwen_gdn_linear_attn.py:373-380): built as an object whose attributes
                        # are computed, when read, by the slice of its own ``__init__``.
                        scope[node.name] = self._sliced_class(relative, node.name)
        # Imported names the statements read directly.
        for name in reads - set(nodes):
            if name not in scope:
                source = self.tree.import_source(relative, name)
                if source is not None and self.code.load(source, [name]):
                    # A definition or a module constant (``FLASHINFER_GDN_CHECKPOINT_ALIGNMENT
                    # = 64``, vllm-0.33.0:vllm/v1/attention/backends/gdn_attn.py:34).
                    self.code.follow_imports(source, [name])
                    if name in self.code.ns:
                        scope[name] = self.code.ns[name]
        return scope

    def _build_layer(
        self,
        vc: Any,
        shapes: list[tuple[int, ...]],
        dtypes: list[Any],
        mamba_type: str,
        text: Any,
        layer_names: tuple[str, ...],
    ) -> tuple[Any, Any] | None:
        """The recurrent layer the model builds, where its class overrides
        ``get_kv_cache_spec`` (``_layer_class``): a stand-in instance answering the model view
        (``get_state_shape`` / ``get_state_dtype``), with what its ``__init__`` sets that its
        methods read computed by the release's own statements (``_init_attributes``); and,
        from here to the end of the case, the forward context's Mamba layers
        (``get_layers_from_vllm_config(vllm_config, MambaBase)``) are it, one per recurrent
        layer, as the server builds them before it aligns the block size
        (``load_model`` then ``update_block_size_for_backend``, vllm-0.33.0:vllm/v1/executor/
        uniproc_executor.py:71-75; ``get_mamba_prefill_checkpoint_alignment``, vllm-0.33.0:
        vllm/platforms/interface.py:1093, vllm/model_executor/layers/mamba/abstract.py:98-113).
        None where no class overrides it (``MambaBase``'s own spec, no layer listed)."""
        made = self._layer_class(mamba_type, vc, text)
        if made is None:
            return None
        layer_cls, owner_file, owner_cls = made
        answers = {
            "get_state_shape": lambda self: tuple(shapes),
            "get_state_dtype": lambda self: tuple(dtypes),
            "mamba_type": mamba_type,
            "is_kv_cache_tp_replicated": False,
            "num_prefill_checkpoint_blocks": 0,
        }
        layer: Any = object.__new__(type("StandInLayer", (layer_cls,), answers))
        self._init_attributes(layer, (owner_file, owner_cls), vc, text, layer_names[0])
        ns = self.code.ns
        ns["get_layers_from_vllm_config"] = lambda config, kind=None, *a, **k: (
            dict.fromkeys(layer_names, layer) if kind is ns.get("MambaBase") else {}
        )
        return layer_cls, layer

    def _mamba_spec(
        self,
        vc: Any,
        shapes: list[tuple[int, ...]],
        dtypes: list[Any],
        mamba_type: str,
        spec: int,
        prefix_caching: bool,
        built: tuple[Any, Any] | None = None,
    ) -> Any:
        """``MambaBase.get_kv_cache_spec`` of the release on a stand-in layer answering the
        model view; before the release had it (0.10.2, 0.11.0), ``GPUModelRunner
        .get_kv_cache_spec``'s construction, mirrored (vllm-0.11.0:vllm/v1/worker/
        gpu_model_runner.py:4112-4140: its speculative and prefix-caching checks, a block of
        ``max_model_len``)."""
        if self.mamba_base is not None:
            if built is None:
                layer = NS(
                    get_state_shape=lambda: tuple(shapes),
                    get_state_dtype=lambda: tuple(dtypes),
                    mamba_type=mamba_type,
                    is_kv_cache_tp_replicated=False,
                    get_prefill_checkpoint_alignment=lambda: None,
                    num_prefill_checkpoint_blocks=0,
                )
                return self.mamba_base.get_kv_cache_spec(layer, vc)
            # The layer class's own override, on the layer built by ``_build_layer``.
            layer_cls, layer = built
            return layer_cls.get_kv_cache_spec(layer, vc)
        if spec and vc.model_config.hf_config.model_type not in ["qwen3_next"]:
            raise NotImplementedError("Mamba with speculative decoding is not supported yet.")
        if vc.cache_config.enable_prefix_caching:
            raise NotImplementedError("Prefix caching is not supported for Mamba yet.")
        return _make(
            self.code.ns["MambaSpec"],
            shapes=tuple(shapes),
            dtypes=tuple(dtypes),
            block_size=vc.model_config.max_model_len,
            page_size_padded=vc.cache_config.mamba_page_size_padded,
            mamba_type=mamba_type,
            num_speculative_blocks=spec,
        )


# -- mirrored per family -----------------------------------------------------------------------


def layers_of(family: str, text: Any) -> tuple[list[int], list[int], str]:
    """(recurrent layer indices, attention layer indices, the layers' ``mamba_type``) as each
    family's decoder builds them, mirrored from the model files (vllm-0.33.0 paths cited; the
    layer plans have not changed since the families were added)."""
    n = int(getattr(text, "num_hidden_layers", 0) or 0)
    if family in ("mamba", "falcon_mamba"):
        return list(range(n)), [], "mamba1"
    if family == "mamba2":
        return list(range(n)), [], "mamba2"
    if family == "falcon_h1":  # falcon_h1.py: every layer holds attention and Mamba-2
        return list(range(n)), list(range(n)), "mamba2"
    if family == "granitemoehybrid":
        kinds = list(text.layer_types)
        # "mamba" (as released), or "linear_attention" after config_view's legacy remap.
        rec = [i for i, k in enumerate(kinds) if k in ("mamba", "linear_attention")]
        return rec, [i for i in range(len(kinds)) if i not in rec], "mamba2"
    if family == "jamba":
        period, offset = text.attn_layer_period, text.attn_layer_offset
        att = [i for i in range(n) if i % period == offset]
        return [i for i in range(n) if i not in att], att, "mamba1"
    if family in ("nemotron_h", "nemotron_h_puzzle"):
        pattern = text.hybrid_override_pattern
        rec = [i for i, c in enumerate(pattern) if c == "M"]
        return rec, [i for i, c in enumerate(pattern) if c == "*"], "mamba2"
    if family == "zamba2":  # zamba2.py: a Mamba-2 mixer in every layer, attention in "hybrid"
        kinds = list(text.layers_block_type)
        return list(range(len(kinds))), [i for i, k in enumerate(kinds) if k == "hybrid"], "mamba2"
    if family in ("qwen3_next", "qwen3_5_text", "qwen3_5_moe_text", "qwen3_5", "qwen3_5_moe"):
        kinds = getattr(text, "layer_types", None) or [
            "full_attention" if (i + 1) % text.full_attention_interval == 0 else "linear_attention"
            for i in range(n)
        ]
        rec = [i for i, k in enumerate(kinds) if k == "linear_attention"]
        return rec, [i for i in range(n) if i not in rec], "gdn_attention"
    if family in ("kimi_linear", "kimi_k3_text", "kimi_k3"):
        kda = {i - 1 for i in text.linear_attn_config["kda_layers"]}
        return sorted(kda), [i for i in range(n) if i not in kda], "kda"
    if family == "minimax_m1":  # attn_type_list: 0 linear attention, 1 softmax attention
        kinds = list(text.attn_type_list)
        rec = [i for i, k in enumerate(kinds) if k == 0]
        return rec, [i for i, k in enumerate(kinds) if k == 1], "linear_attention"
    raise OracleGap(f"no layer plan mirrored for family {family!r}")


def _kv_heads(text: Any) -> int:
    heads = getattr(text, "num_key_value_heads", None)
    return int(heads if heads is not None else text.num_attention_heads)


def _head_size(text: Any, use_mla: bool) -> int:
    if use_mla:
        return int(text.kv_lora_rank + text.qk_rope_head_dim)
    for name in ("head_dim", "attention_head_dim"):
        value = getattr(text, name, None)
        if value:
            return int(value)
    return int(text.hidden_size // text.num_attention_heads)


def _model_dtype(hf: Any, text: Any) -> Any:
    """``--dtype auto``: the config's dtype, float32 served as bfloat16 on SM90
    (``_get_and_verify_dtype``, mirrored)."""
    name = getattr(text, "torch_dtype", None) or getattr(hf, "torch_dtype", None)
    name = name or getattr(text, "dtype", None) or getattr(hf, "dtype", None) or "bfloat16"
    return TORCH.float16 if name == "float16" else TORCH.bfloat16


def _make(cls: Any, **kwargs: Any) -> Any:
    """A spec dataclass of the release built from the fields it has."""
    names = {f.name for f in __import__("dataclasses").fields(cls)}
    return cls(**{k: v for k, v in kwargs.items() if k in names})


def _functions(tree: ReleaseTree, relative: str) -> list[str]:
    return [
        node.name
        for node in ast.parse(tree.path(relative).read_text(encoding="utf-8")).body
        if isinstance(node, ast.FunctionDef)
    ]


def _names_in(node: ast.ClassDef, methods: list[str]) -> set[str]:
    """The bare names ``methods`` of ``node`` read."""
    return {
        n.id
        for item in node.body
        if isinstance(item, ast.FunctionDef) and item.name in methods
        for n in ast.walk(item)
        if isinstance(n, ast.Name)
    }


def _field_defaults(node: ast.ClassDef) -> dict[str, Any]:
    """A config class's fields whose default is a constant (``name: T = 3`` or
    ``name: T = Field(default=3, ...)``); fields with computed defaults are left out."""
    out: dict[str, Any] = {}
    for item in node.body:
        if not (isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)):
            continue
        value = item.value
        if isinstance(value, ast.Call) and ast.unparse(value.func) == "Field":
            value = next((k.value for k in value.keywords if k.arg == "default"), None)
        if value is None:
            continue
        try:
            out[item.target.id] = ast.literal_eval(value)
        except ValueError:
            continue
    return out


def _class_names(tree: ReleaseTree, relative: str) -> set[str]:
    """The classes ``relative`` defines and the names it imports (at any depth)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(tree.path(relative).read_text(encoding="utf-8"))):
        if isinstance(node, ast.ClassDef):
            out.add(node.name)
        elif isinstance(node, ast.ImportFrom):
            out.update(a.asname or a.name for a in node.names)
    return out


def _defined_names(node: ast.stmt) -> set[str]:
    if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
        return {node.name}
    targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
    return {t.id for t in targets if isinstance(t, ast.Name)}


def _source(tree: ReleaseTree, relative: str, name: str) -> str | None:
    """The file defining class ``name`` as ``relative`` sees it (its own, or imported)."""
    return relative if tree.class_node(relative, name) else tree.import_source(relative, name)


def _returned_type(tree: ReleaseTree, relative: str, cls: str) -> str | None:
    """What ``cls``'s ``mamba_type`` returns (``MambaAttentionBackendEnum.MAMBA2``: "mamba2";
    a string constant as it is), or None."""
    node = tree.class_node(relative, cls)
    method = next(
        (i for i in node.body if isinstance(i, ast.FunctionDef) and i.name == "mamba_type"),
        None,
    ) if node else None  # fmt: skip
    for item in ast.walk(method) if method else ():
        if isinstance(item, ast.Return) and item.value is not None:
            if isinstance(item.value, ast.Attribute):
                return getattr(MAMBA_TYPES, item.value.attr, None)
            if isinstance(item.value, ast.Constant) and isinstance(item.value.value, str):
                return item.value.value
    return None


def _assigned(tree: ReleaseTree, relative: str) -> list[str]:
    """The names ``relative`` assigns at its top (its constants and tables)."""
    out: list[str] = []
    for node in ast.parse(tree.path(relative).read_text(encoding="utf-8")).body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        for target in targets:
            elements = target.elts if isinstance(target, ast.Tuple) else [target]
            out.extend(e.id for e in elements if isinstance(e, ast.Name))
    return out


def _top_names(tree: ReleaseTree, relative: str) -> list[str]:
    return [
        node.name
        for node in ast.parse(tree.path(relative).read_text(encoding="utf-8")).body
        if isinstance(node, (ast.FunctionDef, ast.ClassDef))
    ]


def _where(error: BaseException) -> str:
    """The release frame nearest the raise, as ``vllm-X.Y.Z:path:line``."""
    frames = [
        f for f in traceback.extract_tb(error.__traceback__) if f.filename.startswith("vllm-")
    ]
    return f"{frames[-1].filename}:{frames[-1].lineno}" if frames else ""


class _null:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None
