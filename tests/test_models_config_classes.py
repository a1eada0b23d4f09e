"""The config classes the servers read a config with (issue 27).

Always: the tables of the classes' declared defaults (``decode_ring/models/tables/``) are one per
transformers version a server pins and one per server release, well formed, consistent with the
registry; and a config is read with them (the numbers written out below are the classes'
defaults as the tables hold them, each cited).

Where the classes themselves are at hand: ``DECODE_RING_WHEELS`` (a folder with the vLLM 0.33.0
and SGLang 0.5.23 wheels) and ``DECODE_RING_TRANSFORMERS`` (interpreters, separated by
``os.pathsep``, that have transformers 5.20.2 and 5.19.0 installed, the versions vLLM and SGLang
read configs through; no torch needed). Then ``tools/config-classes --check`` regenerates the
tables unchanged, and for every probe below, every fixture and every written config each
server's class, built from the wheel under its transformers, holds the fields the package reads
as ``decode_ring.models.read.class_fields`` does (``tools/peer_agreement/class_probe.py``).
Elsewhere those tests skip with a named reason (``tests/SKIPS.allow``): CI installs transformers
5.23.0, which neither server pins.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import decode_ring.models
from decode_ring.models import ModelConfigError, class_fields, ssm_state
from decode_ring.models.classes import LEGACY_LAYER_TYPES, config_class, table
from decode_ring.models.families import REGISTRY, WRAPPED
from decode_ring.releases import SGLANG, VLLM
from decode_ring.servers.vllm import vllm_reservation

from .support import BAILING_V3

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = Path(__file__).resolve().parent / "configs"
# The installed package's data (the wheel matrix tests an installed wheel).
TABLES = Path(decode_ring.models.__file__).resolve().parent / "tables"
KINDS = {"field", "init", "alias", "property", "undeclared"}


def config(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((CONFIGS / name).read_text(encoding="utf-8"))
    return loaded


# --- the tables ---------------------------------------------------------------------------


def table_names() -> list[str]:
    return [
        f"transformers-{VLLM.transformers}",
        f"transformers-{SGLANG.transformers}",
        f"vllm-{VLLM.version}",
        f"sglang-{SGLANG.version}",
    ]


def test_one_table_per_pinned_transformers_and_per_release() -> None:
    found = sorted(path.stem for path in TABLES.glob("*.json"))
    assert found == sorted(table_names())
    # vLLM 0.33.0's wheel requires transformers >=5.16.1,<5.21.0 and SGLang 0.5.23's ==5.19.0
    # (their METADATA); the newest release in range is modelled.
    assert (VLLM.transformers, VLLM.transformers_requirement) == ("5.20.2", ">=5.16.1,<5.21.0")
    assert (SGLANG.transformers, SGLANG.transformers_requirement) == ("5.19.0", "==5.19.0")


@pytest.mark.parametrize("name", table_names())
def test_each_table_is_well_formed(name: str) -> None:
    classes = table(name)
    assert classes
    for model_type, cls in classes.items():
        assert cls.name and cls.defined_at.count(":") == 1, model_type
        assert cls.source.split()[0] in ("transformers", "vLLM", "SGLang")
        for field, declared in cls.fields.items():
            assert declared.kind in KINDS, (model_type, field)
            assert (declared.kind == "alias") == (declared.of is not None), (model_type, field)
            if declared.kind in ("undeclared", "property"):
                assert not declared.has_default, (model_type, field)


def test_the_servers_own_classes_are_theirs() -> None:
    # vLLM registers Kimi's, Bailing-VL's and Inkling's classes itself (vllm/transformers_utils/
    # config.py:122-176); SGLang most hybrid families', built after transformers' own where
    # transformers has one (S:sglang/srt/utils/hf_transformers/config.py:230-300).
    assert sorted(table(f"vllm-{VLLM.version}")) == [
        "bailing_moe_v3_vl",
        "inkling_mm_model",
        "inkling_model",
        "kimi_k3",
        "kimi_linear",
    ]
    sglang = table(f"sglang-{SGLANG.version}")
    assert sglang["qwen3_next"].after_transformers
    assert not sglang["lfm2"].after_transformers  # swapped into CONFIG_MAPPING (lfm2.py:104)
    assert not sglang["zaya"].after_transformers  # AutoConfig.register(exist_ok=True) (:316)
    assert "bailing_hybrid" not in table(f"transformers-{SGLANG.transformers}")  # from 5.20
    assert "bailing_hybrid" in table(f"transformers-{VLLM.transformers}")


def test_every_family_is_read_with_a_class_or_as_its_file() -> None:
    # No class: the checkpoint's own code would build the config, which the package reads as
    # the file gives it.
    remote = {
        (family, server)
        for family, entry in REGISTRY.items()
        for server, release in (("vllm", VLLM), ("sglang", SGLANG))
        if entry.architectures(server)
        and all(config_class(release, model_type) is None for model_type in entry.model_types)
        and all(
            config_class(release, WRAPPED.get(model_type, model_type)) is None
            for model_type in entry.model_types
        )
    }
    assert remote == {
        ("alice_ai", "vllm"),
        ("interns2_mobius", "vllm"),
        ("nemotron_h_puzzle", "vllm"),
    }


def test_the_wrappers_build_the_text_configs_the_registry_names() -> None:
    for name in table_names():
        for wrapper, cls in table(name).items():
            if wrapper not in WRAPPED or cls.text is None or wrapper in REGISTRY:
                continue
            built = {cls.text.absent, cls.text.untyped} - {None, "none", "dict"}
            expected = WRAPPED[wrapper]
            # transformers names Inkling's text config inkling_text, vLLM and SGLang
            # inkling_model: both are the inkling family's.
            assert built <= {expected, "inkling_text"}, (name, wrapper, built)


def test_the_legacy_layer_names_are_transformers_5s() -> None:
    # transformers 5 configuration_utils.py _LEGACY_LAYER_TYPE_REMAP.
    assert LEGACY_LAYER_TYPES == {
        "mamba": "linear_attention",
        "attention": "full_attention",
        "deepseek_sparse_attention": "indexed_attention",
        "qwen_sparse_attention": "indexed_attention",
    }


# --- reading with the classes' defaults and rules -----------------------------------------------


def test_qwen3_next_without_its_heads_has_the_class_defaults() -> None:
    # Issue 27: Qwen3NextConfig declares num_attention_heads 16, num_key_value_heads 2 and
    # head_dim 256 (transformers configuration_qwen3_next.py:23; SGLang configs/qwen3_next.py:
    # 183-205 alike); the package refused the first.
    qwen = config("qwen3-next-80b-a3b-instruct.json")
    for key in ("num_attention_heads", "num_key_value_heads", "head_dim"):
        del qwen[key]
    for layout in ("vllm", "sglang"):
        attention = ssm_state(qwen, layout=layout).attention
        assert attention is not None
        assert (attention.num_attention_heads, attention.num_key_value_heads) == (16, 2)
        assert attention.head_dim == 256


def test_a_qwen3_5_wrapper_whose_text_config_has_no_model_type() -> None:
    # Issue 27: refused as an unknown model_type 'qwen3_5'; transformers' and SGLang's
    # Qwen3_5Config build Qwen3_5TextConfig from it (configuration_qwen3_5.py:152-187;
    # S:sglang/srt/configs/qwen3_5.py:37-119): Qwen3.5-27B's 48 gated-delta-net layers.
    published = config("qwen3.5-27b.json")
    untyped = {key: value for key, value in published["text_config"].items() if key != "model_type"}
    wrapper = published | {"text_config": untyped}
    for layout in ("vllm", "sglang"):
        assert ssm_state(wrapper, layout=layout) == ssm_state(published, layout=layout)
    # With no text config at all, transformers' default Qwen3_5TextConfig: 32 layers, every
    # fourth full attention, 24 gated-delta-net layers (Qwen3_5TextConfig defaults).
    assert ssm_state({"model_type": "qwen3_5"}).ssm_layers == 24


def test_an_untyped_text_config_takes_the_wrappers_text_class_defaults() -> None:
    # Qwen3_5Config builds Qwen3_5TextConfig from a text_config without model_type, so a field
    # it leaves out is that class's default: linear_num_value_heads 32
    # (transformers configuration_qwen3_5.py: Qwen3_5TextConfig). Conv channels: 16 key heads
    # x 128 x 2 + 32 value heads x 128; window 4 - 1.
    text = config("qwen3.5-27b.json")["text_config"]
    untyped = {k: v for k, v in text.items() if k not in ("model_type", "linear_num_value_heads")}
    state = ssm_state({"model_type": "qwen3_5", "text_config": untyped})
    assert state.conv_shape == (3, 16 * 128 * 2 + 32 * 128)
    assert state.ssm_shape == (32, 128, 128)
    # The same text config, typed, in a wrapper the package does not know: read by its own
    # model type's class.
    typed = {**untyped, "model_type": "qwen3_5_text"}
    state = ssm_state({"model_type": "vl", "text_config": typed})
    assert (state.family, state.model_type) == ("qwen3_5", "vl")
    assert state.conv_shape == (3, 16 * 128 * 2 + 32 * 128)


def test_an_aliased_field_is_held_under_its_target_and_read_by_both_names() -> None:
    # transformers 5.20.2 BailingHybridConfig, vLLM 0.33.0's class for bailing_hybrid:
    # attribute_map max_position_embeddings -> model_max_length and num_mtp_layers ->
    # num_nextn_predict_layers (configuration_bailing_hybrid.py:81-89), defaults 262144 and 1
    # (:112, :124). A default fills the target; either name reads the target's value.
    assert config_class(VLLM, "bailing_hybrid") is not None
    bare = {k: v for k, v in BAILING_V3.items() if k != "max_position_embeddings"}
    fields = class_fields(bare, layout="vllm")
    assert (fields["model_max_length"], fields["max_position_embeddings"]) == (262144, 262144)
    assert (fields["num_nextn_predict_layers"], fields["num_mtp_layers"]) == (1, 1)
    given = class_fields({**bare, "model_max_length": 4096}, layout="vllm")
    assert (given["model_max_length"], given["max_position_embeddings"]) == (4096, 4096)
    by_alias = class_fields({**bare, "max_position_embeddings": 8192}, layout="vllm")
    assert (by_alias["model_max_length"], by_alias["max_position_embeddings"]) == (8192, 8192)


def test_legacy_names_in_mtp_layer_types_are_renamed_too() -> None:
    # transformers 5.20.2 remap_legacy_layer_types (configuration_utils.py:94-136) renames
    # layer_types and mtp_layer_types alike; a name it does not know is kept.
    fields = class_fields({**BAILING_V3, "mtp_layer_types": ["attention", "mamba", "conv"]})
    assert fields["mtp_layer_types"] == ["full_attention", "linear_attention", "conv"]


def test_a_layer_type_that_is_not_a_string_is_refused_not_renamed() -> None:
    # transformers' remap looks every entry up in a dict (configuration_utils.py:125), so a
    # list entry fails there too; the package refuses it as a field, never a TypeError.
    qwen = config("qwen3-next-80b-a3b-instruct.json")
    kinds = [["linear_attention"]] + ["full_attention"] * (qwen["num_hidden_layers"] - 1)
    with pytest.raises(ModelConfigError, match="field 'layer_types': entry 0 is <list>"):
        ssm_state({**qwen, "layer_types": kinds}, layout="vllm")


def test_a_layer_list_given_by_its_alias_is_refused_by_that_name() -> None:
    # Zamba2Config (transformers 5.20.2) aliases layer_types to layers_block_type; its strict
    # validate_layer_type refuses a list that is not num_hidden_layers long. The refusal names
    # the file's own key, not the class's default list it replaced.
    zamba = config("zamba2-2.7b.json")
    short = {k: v for k, v in zamba.items() if k != "layers_block_type"}
    short["layer_types"] = ["mamba"] * 53
    with pytest.raises(ModelConfigError) as refused:
        ssm_state(short, layout="vllm")
    assert str(refused.value) == (
        "zamba2 config: field 'layer_types': has 53 entries but num_hidden_layers is 54"
    )


def test_a_class_names_where_its_rules_are() -> None:
    # The tables' rules_at: the line of the class's __init__ / __post_init__ whose rules the
    # family's rules_* mirror.
    bailing = config_class(VLLM, "bailing_hybrid")
    kimi = config_class(SGLANG, "kimi_linear")
    assert bailing is not None and kimi is not None
    where = "transformers/models/bailing_hybrid/configuration_bailing_hybrid.py:138"
    assert (bailing.source, bailing.rules_at) == ("transformers 5.20.2", where)
    assert (kimi.source, kimi.rules_at) == ("SGLang 0.5.23", "sglang/srt/configs/kimi_linear.py:16")


def test_lfm2_layers_from_full_attn_idxs() -> None:
    # Issue 27: an LFM2 config with full_attn_idxs and no layer_types was refused;
    # Lfm2Config.__post_init__ makes the list (configuration_lfm2.py:81-88), under SGLang too.
    lfm2 = {
        "model_type": "lfm2",
        "architectures": ["Lfm2ForCausalLM"],
        "num_hidden_layers": 6,
        "full_attn_idxs": [2, 5],
        "hidden_size": 512,
        "conv_dim": 512,
        "conv_L_cache": 3,
        "num_attention_heads": 8,
        "num_key_value_heads": 2,
    }
    for layout in ("vllm", "sglang"):
        assert ssm_state(lfm2, layout=layout).layer_indices == (0, 1, 3, 4)


def test_bailing_head_dim_is_each_servers_classs() -> None:
    # transformers 5.20's BailingHybridConfig (vLLM's) makes head_dim qk_rope_head_dim
    # (configuration_bailing_hybrid.py:159), which vLLM's BailingMoeV3 sizes its KDA heads by
    # (bailing_moe_v3.py:152); SGLang's class keeps head_dim (configs/bailing_hybrid.py:129).
    bailing = {
        "model_type": "bailing_hybrid",
        "architectures": ["BailingMoeV3ForCausalLM"],
        "num_hidden_layers": 6,
        "layer_group_size": 3,
        "num_attention_heads": 8,
        "num_key_value_heads": 8,
        "hidden_size": 1024,
        "head_dim": 128,
        "qk_rope_head_dim": 64,
        "kv_lora_rank": 512,
        "short_conv_kernel_size": 4,
        "no_kda_lora": True,
    }
    assert ssm_state(bailing).ssm_shape == (8, 64, 64)
    assert ssm_state(bailing, layout="sglang").ssm_shape == (8, 128, 128)
    assert class_fields(bailing)["linear_head_dim"] == 128


def test_glm5_next_gate_bound_is_the_class_default_under_vllm() -> None:
    # transformers 5.20.2's Glm5NextTextConfig defaults linear_lower_bound to -5.0 and folds
    # linear_attn_config's gate_lower_bound over it (configuration_glm5_next.py:146, :189-197).
    # vLLM's KDA layer prefills with FlashKDA given a bound (vllm/models/glm5next/common/kda.py:
    # 137-159, :338-351), which in align mode plans one prefill checkpoint block: 2 + 0 + 1
    # blocks per request, 10,267,656,192 B for 256 sequences at tp 1 (tools/peer_agreement
    # grid on this file: vLLM's own planning, run from the wheel).
    glm5 = config("written/glm5-next-linear-attn-config-written.json")
    assert "linear_lower_bound" not in glm5["text_config"]
    assert class_fields(glm5)["linear_lower_bound"] == -5.0
    reservation = vllm_reservation(glm5)
    assert reservation.prefill_checkpoint_blocks == 1
    assert reservation.planned_blocks_per_request == 3
    assert reservation.planned_state_bytes == 10_267_656_192


def test_sglang_reads_granite_layers_by_its_own_names() -> None:
    # SGLang's GraniteMoeHybridConfig names transformers 5's linear_attention mamba again
    # (S:sglang/srt/configs/granitemoehybrid.py:29-32, :195, :276).
    granite = config("granite-4.0-h-tiny.json")
    renamed = [
        {"mamba": "linear_attention", "attention": "full_attention"}[kind]
        for kind in granite["layer_types"]
    ]
    fields = class_fields(granite | {"layer_types": renamed}, layout="sglang")
    assert fields["layer_types"] == granite["layer_types"]
    assert class_fields(granite)["layer_types"] == renamed  # transformers' names under vLLM
    # No layer_types: transformers' class makes every layer Mamba, SGLang's every sixth one
    # attention (configuration_granitemoehybrid.py:106-107; S:granitemoehybrid.py:186-193).
    bare = {key: value for key, value in granite.items() if key != "layer_types"}
    assert ssm_state(bare).ssm_layers == 40
    assert ssm_state(bare, layout="sglang").ssm_layers == 34


def test_nemotron_h_legacy_fields_are_transformers_renames() -> None:
    # NemotronHConfig.__post_init__ takes mamba_n_groups over n_groups and mamba_d_conv over
    # conv_kernel (configuration_nemotron_h.py:146-148); SGLang's reads n_groups and lets a
    # given conv_kernel win (S:sglang/srt/configs/nemotron_h.py:359-363, super().__init__).
    nemotron = config("nemotron-nano-9b-v2.json") | {"mamba_n_groups": 4, "mamba_d_conv": 3}
    fields = class_fields(nemotron)
    assert (fields["n_groups"], fields["conv_kernel"]) == (4, 3)
    sglang = class_fields(nemotron, layout="sglang")
    assert (sglang["n_groups"], sglang["conv_kernel"]) == (8, 4)


def test_zamba2_derived_dims_are_kept_where_given() -> None:
    # Zamba2Config.__post_init__ sets attention_head_dim and mamba_headdim, and the file's own
    # values, passed on as kwargs, win (configuration_zamba2.py:112-140).
    zamba = config("zamba2-2.7b.json")
    fields = class_fields({key: v for key, v in zamba.items() if key != "mamba_headdim"})
    assert fields["mamba_headdim"] == 2 * 2560 // 80
    assert class_fields(zamba | {"attention_head_dim": 998})["attention_head_dim"] == 998


def test_a_null_the_class_does_not_allow_is_refused_naming_the_class() -> None:
    nemotron = config("nemotron-nano-9b-v2.json") | {"num_key_value_heads": None}
    with pytest.raises(ModelConfigError) as caught:
        ssm_state(nemotron)
    assert str(caught.value) == (
        "nemotron_h config: field 'num_key_value_heads': must be an integer, got None "
        "(NoneType) (NemotronHConfig (transformers 5.20.2, "
        "transformers/models/nemotron_h/configuration_nemotron_h.py:25))"
    )
    # SGLang builds transformers 5.19's class first (AutoConfig), which refuses it too.
    with pytest.raises(ModelConfigError, match=r"transformers 5\.19\.0"):
        ssm_state(nemotron, layout="sglang")


# --- against the classes themselves -------------------------------------------------------------

WHEELS = "DECODE_RING_WHEELS"
PYTHONS = "DECODE_RING_TRANSFORMERS"


def pinned() -> dict[str, str]:
    """transformers version -> an interpreter of ``DECODE_RING_TRANSFORMERS`` that has it."""
    found: dict[str, str] = {}
    for python in filter(None, os.environ.get(PYTHONS, "").split(os.pathsep)):
        done = subprocess.run(
            [python, "-c", "import transformers; print(transformers.__version__)"],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode == 0:
            found.setdefault(done.stdout.strip().splitlines()[-1], python)
    return found


def classes_at_hand() -> tuple[str, dict[str, str]]:
    """The wheels and the pinned interpreters, or a skip naming what is missing."""
    if not (ROOT / "tools" / "peer_agreement").is_dir():
        pytest.skip("the source tree is not beside the tests")
    wheels = os.environ.get(WHEELS)
    if not wheels:
        pytest.skip(
            f"{WHEELS} is not set: the servers' config classes run from their wheels "
            "(pip download --no-deps -d WHEELS vllm==0.33.0 sglang==0.5.23)"
        )
    pythons = pinned()
    for release in (VLLM, SGLANG):
        if release.transformers not in pythons:
            pytest.skip(
                f"no Python with transformers {release.transformers} in {PYTHONS}, which "
                f"{release} reads configs through"
            )
    return wheels, pythons


@pytest.fixture(scope="module")
def builders() -> Iterator[dict[str, Any]]:
    wheels, pythons = classes_at_hand()
    sys.path.insert(0, str(ROOT / "tools"))
    from peer_agreement.class_probe import Builder
    from peer_agreement.wheels import find_wheels, unpack

    roots = dict(zip(("vllm", "sglang"), (unpack(w) for w in find_wheels([wheels])), strict=True))
    made = {
        "vllm": Builder(pythons[VLLM.transformers], "vllm", roots["vllm"]),
        "sglang": Builder(pythons[SGLANG.transformers], "sglang", roots["sglang"]),
    }
    yield made
    for builder in made.values():
        builder.close()


def test_the_tables_regenerate_from_the_classes() -> None:
    wheels, pythons = classes_at_hand()
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "tools" / "config-classes"),
            "--check",
            "--wheels",
            wheels,
            "--python",
            *pythons.values(),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


QWEN3_5_27B_TEXT = {
    "hidden_size": 5120,
    "num_hidden_layers": 64,
    "num_attention_heads": 24,
    "num_key_value_heads": 4,
    "head_dim": 256,
    "linear_num_key_heads": 16,
    "linear_num_value_heads": 48,
    "linear_key_head_dim": 128,
    "linear_value_head_dim": 128,
    "linear_conv_kernel_dim": 4,
    "full_attention_interval": 4,
    "mamba_ssm_dtype": "float32",
    "layer_types": (["linear_attention"] * 3 + ["full_attention"]) * 16,
}
# (model type, probe, fields): configs with fields missing, null, legacy or disagreeing, which
# the classes fill in, derive, rename or refuse.
PROBES: list[tuple[str, str, dict[str, Any]]] = [
    ("qwen3_next", "no layer_types", {"num_hidden_layers": 8}),
    ("qwen3_next", "interval 2", {"num_hidden_layers": 8, "full_attention_interval": 2}),
    ("qwen3_next", "layer_types only", {"num_hidden_layers": 4, "layer_types": ["mamba"] * 4}),
    ("qwen3_next", "null interval", {"num_hidden_layers": 4, "full_attention_interval": None}),
    ("qwen3_next", "empty", {}),
    ("qwen3_5", "no text_config", {}),
    ("qwen3_5", "untyped 27B text", {"text_config": dict(QWEN3_5_27B_TEXT)}),
    ("qwen3_5_moe", "no text_config", {}),
    ("minicpmv4_7", "untyped 27B text", {"text_config": dict(QWEN3_5_27B_TEXT)}),
    ("minicpmv4_7", "typed text", {"text_config": {"model_type": "qwen3_5_text"}}),
    ("lfm2", "nothing", {"num_hidden_layers": 6}),
    ("lfm2", "full_attn_idxs", {"num_hidden_layers": 6, "full_attn_idxs": [2, 5]}),
    ("lfm2_moe", "no layer_types", {"num_hidden_layers": 4}),
    ("lfm2_vl", "untyped text", {"text_config": {"num_hidden_layers": 4, "full_attn_idxs": [1]}}),
    ("nemotron_h", "pattern only", {"hybrid_override_pattern": "M*M-", "num_hidden_layers": 10}),
    ("nemotron_h", "nothing", {}),
    ("nemotron_h", "mamba_n_groups", {"mamba_n_groups": 4, "hybrid_override_pattern": "M*"}),
    ("nemotron_h", "both lists", {"layers_block_type": ["mamba"], "hybrid_override_pattern": "*"}),
    ("nemotron_h", "null KV heads", {"num_key_value_heads": None}),
    ("granitemoehybrid", "no layer_types", {"num_hidden_layers": 4}),
    ("granitemoehybrid", "d_head auto", {"layer_types": ["mamba"] * 40, "mamba_d_head": "auto"}),
    ("falcon_h1", "d_ssm null", {"mamba_d_ssm": None, "hidden_size": 1024, "mamba_n_heads": 16}),
    ("falcon_h1", "empty", {}),
    ("zamba2", "given dims", {"attention_head_dim": 998, "mamba_headdim": 7}),
    ("zamba2", "empty", {}),
    ("jamba", "empty", {}),
    ("mamba", "empty", {}),
    ("mamba2", "empty", {}),
    ("kimi_linear", "empty", {"num_hidden_layers": 8}),
    ("olmo_hybrid", "no linear fields", {"num_hidden_layers": 8, "hidden_size": 1024}),
    ("zaya", "head_dim null", {"head_dim": None, "kv_channels": 64}),
    ("zaya", "zaya_layers", {"zaya_layers": ["a", 16, "a", 16]}),
    ("bailing_hybrid", "head_dim and rope", {"head_dim": 128, "qk_rope_head_dim": 64}),
    ("bailing_hybrid", "empty", {}),
    ("glm5_next", "top level beside text", {"num_hidden_layers": 12, "text_config": {}}),
    ("gigachat3_5", "empty", {}),
    ("minicpm_sala", "mixers", {"num_hidden_layers": 5, "mixer_types": ["lightning", "minicpm4"]}),
    ("jet_vlm", "untyped text", {"text_config": {"layer_types": ["jet", "attn"]}}),
]


def probes() -> list[Any]:
    made = [
        pytest.param({"model_type": model_type, **fields}, id=f"{model_type}: {name}")
        for model_type, name, fields in PROBES
    ]
    for path in sorted([*CONFIGS.glob("*.json"), *(CONFIGS / "written").glob("*.json")]):
        made.append(pytest.param(json.loads(path.read_text(encoding="utf-8")), id=path.name))
    return made


@pytest.mark.parametrize("probe", probes())
@pytest.mark.parametrize("server", ["vllm", "sglang"])
def test_the_package_reads_as_the_classes(
    builders: dict[str, Any], server: str, probe: dict[str, Any]
) -> None:
    from peer_agreement.class_probe import compare

    assert compare(builders[server], server, probe) == []
