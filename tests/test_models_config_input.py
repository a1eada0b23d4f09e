"""How ``ssm_state`` reads a config: a mapping, a file, a directory or anything with
``to_dict()``; transformers' own configs; wrappers and their text config; configs no family
reads (plain transformers, unknown and removed families); and every way a file fails, as a
``ModelConfigError`` naming the path, never an ``OSError``.

Every expected number is written out from the checkpoint's published config values (the products
spell the fields: layers x (conv window x channels x bytes + heads x head dim x d_state x bytes)),
or from the wheels' code (vllm-0.33.0, sglang-0.5.23, cited file:lines; the same cases run through
the servers' own functions in tools/peer_agreement), never computed by the code under test.
Families with no public checkpoint (tests/configs/PROVENANCE.md) are read from transformers 5.23's
own ``to_dict()``, or from configs written out from the fields the wheels read
(tests/configs/written/, not released checkpoints).
"""

from __future__ import annotations

import errno
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from decode_ring.models import (
    LAYOUTS,
    ModelConfigError,
    class_fields,
    load_config,
    ssm_state,
    text_config,
)

from .support import CONFIGS, FOLLOWS_CONV, SMALL_MAMBA2, config, fields_of, refusal, refused


class Exported:
    """Stands in for a transformers config: only ``to_dict()``."""

    def __init__(self, fields: dict[str, Any]) -> None:
        self.fields = fields

    def to_dict(self) -> dict[str, Any]:
        return dict(self.fields)


def test_every_form_of_config_reads_the_same(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(
        (CONFIGS / "nemotron-nano-9b-v2.json").read_text(encoding="utf-8"), encoding="utf-8"
    )
    forms: list[Any] = [
        config("nemotron-nano-9b-v2.json"),
        Exported(config("nemotron-nano-9b-v2.json")),
        tmp_path,
        str(tmp_path),
        tmp_path / "config.json",
        os.fspath(tmp_path / "config.json"),
    ]
    states = [ssm_state(form) for form in forms]
    assert {state.per_sequence_bytes for state in states} == {
        27 * (3 * 12288 * 2 + 128 * 80 * 128 * 4)
    }
    assert [state.source for state in states] == [None, None] + [
        os.fspath(tmp_path / "config.json")
    ] * 4


@pytest.mark.parametrize(
    ("model_type", "overrides", "layers", "conv_shape", "ssm_shape", "per_sequence"),
    [
        # hidden 768 x expand 2, d_state 16, K 4, 32 layers.
        ("mamba", {}, 32, (3, 1536), (1536, 16), 32 * (3 * 1536 * 2 + 1536 * 16 * 2)),
        (
            "mamba",
            {"hidden_size": 1024, "state_size": 32, "conv_kernel": 3, "num_hidden_layers": 7},
            7,
            (2, 2048),
            (2048, 32),
            7 * (2 * 2048 * 2 + 2048 * 32 * 2),
        ),
        (
            "mamba2",
            {},
            64,
            (3, 8192 + 2 * 8 * 128),
            (128, 64, 128),
            64 * (3 * 10240 * 2 + 128 * 64 * 128 * 2),
        ),
        (
            "mamba2",
            {
                "hidden_size": 2048,
                "num_heads": 64,
                "head_dim": 64,
                "n_groups": 1,
                "state_size": 64,
                "num_hidden_layers": 5,
            },
            5,
            (3, 4096 + 2 * 1 * 64),
            (64, 64, 64),
            5 * (3 * 4224 * 2 + 64 * 64 * 64 * 2),
        ),
        ("jamba", {}, 28, (3, 8192), (8192, 16), 28 * (3 * 8192 * 2 + 8192 * 16 * 2)),
        (
            "jamba",
            {
                "num_hidden_layers": 13,
                "attn_layer_period": 3,
                "attn_layer_offset": 2,
                "mamba_d_state": 8,
                "hidden_size": 1024,
            },
            9,
            (3, 2048),
            (2048, 8),
            9 * (3 * 2048 * 2 + 2048 * 8 * 2),
        ),
        # transformers 5's default layers_block_type has one linear_attention layer; its
        # mamba_ssm_cache_dtype defaults to float32.
        (
            "nemotron_h",
            {},
            1,
            (3, 128 * 64 + 2 * 8 * 128),
            (128, 64, 128),
            1 * (3 * 10240 * 2 + 128 * 64 * 128 * 4),
        ),
        (
            "nemotron_h",
            {
                "hybrid_override_pattern": "M*M-MEM",
                "mamba_num_heads": 48,
                "mamba_head_dim": 32,
                "n_groups": 2,
                "ssm_state_size": 64,
            },
            4,
            (3, 48 * 32 + 2 * 2 * 64),
            (48, 32, 64),
            4 * (3 * 1792 * 2 + 48 * 32 * 64 * 4),
        ),
        # mamba_d_ssm 1024 over 128 heads: head dim "auto" = 8.
        (
            "falcon_h1",
            {},
            32,
            (3, 1024 + 2 * 1 * 256),
            (128, 8, 256),
            32 * (3 * 1536 * 2 + 128 * 8 * 256 * 2),
        ),
        (
            "falcon_h1",
            {
                "mamba_d_ssm": None,
                "hidden_size": 1024,
                "mamba_n_heads": 32,
                "mamba_n_groups": 2,
                "num_hidden_layers": 9,
            },
            9,
            (3, 2048 + 2 * 2 * 256),
            (32, 64, 256),
            9 * (3 * 3072 * 2 + 32 * 64 * 256 * 2),
        ),
        (
            "granitemoehybrid",
            {},
            32,
            (3, 8192 + 2 * 1 * 256),
            (128, 64, 256),
            32 * (3 * 8704 * 2 + 128 * 64 * 256 * 2),
        ),
        (
            "granitemoehybrid",
            {
                "layer_types": ["mamba", "attention", "mamba"],
                "num_hidden_layers": 3,
                "hidden_size": 512,
                "mamba_n_heads": 16,
                "mamba_n_groups": 4,
            },
            2,
            (3, 1024 + 2 * 4 * 256),
            (16, 64, 256),
            2 * (3 * 3072 * 2 + 16 * 64 * 256 * 2),
        ),
        # transformers' default: 54 layers, 8 heads of 5120 / 8 = 640, d_state 64.
        (
            "zamba2",
            {},
            54,
            (3, 5120 + 2 * 1 * 64),
            (8, 640, 64),
            54 * (3 * 5248 * 2 + 8 * 640 * 64 * 2),
        ),
        (
            "zamba2",
            {
                "layers_block_type": ["mamba", "hybrid", "mamba"],
                "num_hidden_layers": 3,
                "n_mamba_heads": 40,
                "mamba_ngroups": 2,
                "mamba_d_state": 32,
            },
            3,
            (3, 5120 + 2 * 2 * 32),
            (40, 128, 32),
            3 * (3 * 5248 * 2 + 40 * 128 * 32 * 2),
        ),
        (
            "qwen3_next",
            {},
            36,
            (3, 2 * 16 * 128 + 32 * 128),
            (32, 128, 128),
            36 * (3 * 8192 * 2 + 32 * 128 * 128 * 2),
        ),
        (
            "qwen3_next",
            {
                "num_hidden_layers": 12,
                "full_attention_interval": 3,
                "linear_num_value_heads": 64,
                "linear_num_key_heads": 8,
                "linear_key_head_dim": 64,
            },
            8,
            (3, 2 * 8 * 64 + 64 * 128),
            (64, 128, 64),
            8 * (3 * 9216 * 2 + 64 * 128 * 64 * 2),
        ),
    ],
)
def test_transformers_to_dict(
    model_type: str,
    overrides: dict[str, Any],
    layers: int,
    conv_shape: tuple[int, ...],
    ssm_shape: tuple[int, ...],
    per_sequence: int,
) -> None:
    transformers = pytest.importorskip("transformers")
    exported = transformers.AutoConfig.for_model(model_type, **overrides)
    state = ssm_state(exported.to_dict())
    assert (state.family, state.ssm_layers) == (model_type, layers)
    assert (state.conv_shape, state.ssm_shape) == (conv_shape, ssm_shape)
    assert state.per_sequence_bytes == per_sequence
    assert ssm_state(exported) == state  # the object itself, through to_dict()


@pytest.mark.parametrize("bad", [None, 42, [("model_type", "mamba")], b"config.json"])
def test_config_of_the_wrong_type(bad: Any) -> None:
    with pytest.raises(TypeError):
        ssm_state(bad)


def test_to_dict_must_return_a_mapping() -> None:
    class Odd:
        def to_dict(self) -> list[int]:
            return [1]

    with pytest.raises(ModelConfigError, match=r"config.to_dict\(\) returned list"):
        ssm_state(Odd())  # type: ignore[arg-type]


def test_file_errors(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.json"
    with pytest.raises(ModelConfigError) as caught:
        ssm_state(missing)
    assert str(caught.value) == f"cannot read {os.fspath(missing)!a}: No such file or directory"
    with pytest.raises(ModelConfigError) as caught:
        ssm_state(tmp_path)
    assert str(caught.value) == f"{os.fspath(tmp_path)!a}: directory has no config.json"
    broken = tmp_path / "broken.json"
    broken.write_text('{"model_type": "mamba",\n  "state_size": }', encoding="utf-8")
    with pytest.raises(ModelConfigError) as caught:
        ssm_state(broken)
    assert str(caught.value) == (
        f"{os.fspath(broken)!a}: malformed JSON: Expecting value at line 2 column 17"
    )
    listed = tmp_path / "list.json"
    listed.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(ModelConfigError) as caught:
        ssm_state(listed)
    assert str(caught.value) == f"{os.fspath(listed)!a}: JSON is an array, not an object"
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe{")
    with pytest.raises(ModelConfigError, match="cannot read"):
        ssm_state(binary)


class BytesPath:
    def __fspath__(self) -> bytes:
        return b"config.json"


def test_a_bytes_path_is_a_type_error() -> None:
    with pytest.raises(TypeError, match=r"^a config path must be str, not bytes$"):
        ssm_state(BytesPath())  # type: ignore[arg-type]


def test_file_errors_carry_the_path(tmp_path: Path) -> None:
    error = refused(tmp_path, f"{str(tmp_path)!a}: directory has no config.json")
    assert error.path == str(tmp_path)
    missing = tmp_path / "missing.json"
    error = refused(missing, f"cannot read {str(missing)!a}: No such file or directory")
    assert error.path == str(missing)
    malformed = tmp_path / "malformed.json"
    malformed.write_text("{")
    error = refused(
        malformed,
        f"{str(malformed)!a}: malformed JSON: Expecting property name "
        "enclosed in double quotes at line 1 column 2",
    )
    assert error.path == str(malformed)
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    error = refused(deep, f"{str(deep)!a}: malformed JSON: nested too deep")
    assert error.path == str(deep)
    array = tmp_path / "array.json"
    array.write_text("[]")
    error = refused(array, f"{str(array)!a}: JSON is an array, not an object")
    assert error.path == str(array)


def test_a_config_is_read_as_utf8(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_bytes(
        json.dumps(
            {"model_type": "llama", "num_hidden_layers": 2, "é": 1}, ensure_ascii=False
        ).encode("utf-8")
    )
    assert ssm_state(path).model_type == "llama"


# What ssm_state says of a path it cannot read: "cannot read 'PATH': reason", the OS's whole
# reason (os.strerror, the C library's text), a ModelConfigError and never a bare OSError; the
# same form as the command line's resolver (decode_ring/snapshots.py).
def test_a_path_too_long_is_a_config_error_not_an_oserror(tmp_path: Path) -> None:
    # Path.is_dir() raises ENAMETOOLONG rather than answering False.
    long = tmp_path / ("x" * 300) / "config.json"
    with pytest.raises(ModelConfigError) as caught:
        ssm_state(long)
    assert str(caught.value) == (
        f"cannot read {os.fspath(long)!a}: {os.strerror(errno.ENAMETOOLONG)}"
    )
    assert caught.value.path == os.fspath(long)


def test_a_looped_config_json_symlink_says_it_is_a_loop(tmp_path: Path) -> None:
    looped = tmp_path / "config.json"
    looped.symlink_to(looped)
    expected = f"{os.strerror(errno.ELOOP)} (a symlink loop)"
    with pytest.raises(ModelConfigError) as caught:
        ssm_state(tmp_path)  # the directory has a config.json: it cannot be read
    assert str(caught.value) == f"cannot read {os.fspath(looped)!a}: {expected}"
    with pytest.raises(ModelConfigError) as caught:
        ssm_state(looped)
    assert str(caught.value) == f"cannot read {os.fspath(looped)!a}: {expected}"


def test_the_reason_a_file_cannot_be_read_is_whole(tmp_path: Path) -> None:
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe{")
    with pytest.raises(ModelConfigError) as caught:
        ssm_state(binary)
    # Python's own UnicodeDecodeError text, 83 characters: nothing cut.
    assert str(caught.value) == (
        f"cannot read {os.fspath(binary)!a}: not UTF-8 text ('utf-8' codec can't decode byte "
        "0xff in position 0: invalid start byte)"
    )
    directory = tmp_path / "holder"
    (directory / "config.json").mkdir(parents=True)
    with pytest.raises(ModelConfigError) as caught:
        ssm_state(directory)
    inner = os.fspath(directory / "config.json")
    assert str(caught.value) == f"cannot read {inner!a}: {os.strerror(errno.EISDIR)}"
    with pytest.raises(ModelConfigError) as caught:
        ssm_state(f"{tmp_path}/a\0b")
    assert (
        str(caught.value) == f"cannot read {f'{tmp_path}/a' + chr(0) + 'b'!a}: embedded null byte"
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # json's own messages end in "at" before the position it appends.
        ('{"a": "unterminated', "Unterminated string starting at line 1 column 7"),
        ('{"a": "\x01"}', "Invalid control character at line 1 column 8"),
        ('{"a": 1}\n{', "Extra data at line 2 column 1"),
    ],
)
def test_malformed_json_names_the_place_once(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "config.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ModelConfigError) as caught:
        ssm_state(path)
    assert str(caught.value) == f"{os.fspath(path)!a}: malformed JSON: {message}"


def test_an_empty_path_is_refused_not_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "config.json").write_text(json.dumps(config("mamba-2.8b-hf.json")))
    monkeypatch.chdir(tmp_path)
    assert ssm_state(".").ssm_layers == 64
    # (Path("") is Path("."), the directory named on purpose; only the string can be empty.)
    with pytest.raises(ModelConfigError) as caught:
        ssm_state("")
    assert str(caught.value) == "empty path; give a config.json or a snapshot directory holding one"
    assert caught.value.path == ""


def test_a_file_path_with_odd_characters_stays_on_one_line(tmp_path: Path) -> None:
    odd = tmp_path / "a\nb\u00e9"
    odd.mkdir()
    with pytest.raises(ModelConfigError) as caught:
        ssm_state(odd)
    assert "\n" not in str(caught.value)
    assert str(caught.value).isascii()


def test_unknown_model_type_with_ssm_fields_lists_the_families() -> None:
    with pytest.raises(ModelConfigError) as caught:
        ssm_state({"model_type": "rwkv7", "num_hidden_layers": 32, "mamba_d_state": 128})
    assert str(caught.value) == (
        "field 'model_type': unknown model_type 'rwkv7' has SSM fields ('mamba_d_state'); "
        "supported families: alice_ai, bailing_hybrid, falcon_h1, falcon_mamba, gigachat3_5, "
        "glm5_next, granitemoehybrid, inkling, interns2_mobius, jamba, jet_nemotron, "
        "kimi_linear, lfm2, lfm2_moe, lfm2_vl, mamba, mamba2, minicpm_sala, minicpmv4_6, "
        "nemotron_h, nemotron_h_puzzle, olmo_hybrid, qwen3_5, qwen3_5_moe, qwen3_next, qwen4_exp, "
        "zamba2, zaya"
    )
    assert (caught.value.field, caught.value.family) == ("model_type", None)


@pytest.mark.parametrize(
    "fields",
    [
        {"model_type": "rwkv7", "num_hidden_layers": 16, "layer_types": ["conv", "full_attention"]},
        {
            "model_type": "rwkv7_vl",
            "llm_config": {"model_type": "rwkv7", "linear_num_key_heads": 16},
            "num_hidden_layers": 16,
        },
        {"model_type": "x", "hybrid_override_pattern": "M*", "num_hidden_layers": 2},
        {"model_type": "mystery"},
        {"model_type": "llama", "num_hidden_layers": 32.0},
    ],
)
def test_unknown_model_types_are_refused(fields: dict[str, Any]) -> None:
    with pytest.raises(ModelConfigError, match="supported families: alice_ai, bailing_hybrid, "):
        ssm_state(fields)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"num_hidden_layers": 2}, "field 'model_type': missing"),
        ({"model_type": 7}, "field 'model_type': must be a string, got 7"),
    ],
)
def test_model_type_must_be_a_string(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(ModelConfigError) as caught:
        ssm_state(fields)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("name", "family"), [("jamba-mini-1.5.json", "jamba"), ("zamba2-2.7b.json", "zamba2")]
)
def test_sglang_refuses_families_it_does_not_have(name: str, family: str) -> None:
    with pytest.raises(ModelConfigError) as caught:
        ssm_state(config(name), layout="sglang")
    assert str(caught.value) == (
        f"{family} config: field 'model_type': SGLang 0.5.23 has no {family} model "
        "(no config with mamba2_cache_params); use layout vllm or metrale"
    )


def test_plain_transformer_has_no_state() -> None:
    llama = {
        "model_type": "llama",
        "num_hidden_layers": 32,
        "hidden_size": 4096,
        "layer_types": ["full_attention"] * 32,
        "torch_dtype": "bfloat16",
    }
    for layout in LAYOUTS:
        state = ssm_state(llama, layout=layout, tp_size=3)
        assert (state.family, state.model_type, state.ssm_layers) == ("transformer", "llama", 0)
        assert (state.conv_shape, state.ssm_shape, state.per_sequence_bytes) == ((), (), 0)


def test_unknown_configs_name_the_file(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text("{}")
    error = refused(path, f"{str(path)!a}: field 'model_type': missing")
    assert (error.path, error.field) == (str(path), "model_type")
    error = refused({"model_type": 1}, "field 'model_type': must be a string, got 1")
    assert (error.path, error.field) == (None, "model_type")


FAMILY_LIST = (
    "supported families: alice_ai, bailing_hybrid, falcon_h1, falcon_mamba, gigachat3_5, "
    "glm5_next, granitemoehybrid, inkling, interns2_mobius, jamba, jet_nemotron, kimi_linear, "
    "lfm2, lfm2_moe, lfm2_vl, mamba, mamba2, minicpm_sala, minicpmv4_6, nemotron_h, "
    "nemotron_h_puzzle, olmo_hybrid, qwen3_5, qwen3_5_moe, qwen3_next, qwen4_exp, zamba2, zaya"
)


def test_unknown_ssm_configs_list_what_looks_ssm(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(
        json.dumps({"model_type": "x", "num_hidden_layers": 1, "layer_types": ["mamba"]})
    )
    error = refused(
        path,
        f"{str(path)!a}: field 'model_type': unknown model_type 'x' has SSM fields "
        f"('layer_types'); {FAMILY_LIST}",
    )
    assert (error.path, error.field) == (str(path), "model_type")
    refused(
        {
            "model_type": "x",
            "num_hidden_layers": 1,
            "a_mamba": 1,
            "b_ssm": 1,
            "conv_kernel": 1,
            "linear_x": 1,
            "state_size": 1,
        },
        "field 'model_type': unknown model_type 'x' has SSM fields ('a_mamba', 'b_ssm', "
        f"'conv_kernel', 'linear_x'); {FAMILY_LIST}",
    )
    refused(
        {"model_type": "x", "text_config": {"mamba_x": 1, "num_hidden_layers": 1}},
        f"field 'model_type': unknown model_type 'x' has SSM fields ('mamba_x'); {FAMILY_LIST}",
    )
    refused(
        {"model_type": "x"},
        "field 'model_type': unknown model_type 'x' is not a plain transformer (no integer "
        f"num_hidden_layers); {FAMILY_LIST}",
    )
    refused(
        {"model_type": "x", "num_hidden_layers": None, "text_config": {"num_hidden_layers": "2"}},
        "field 'model_type': unknown model_type 'x' is not a plain transformer (no integer "
        f"num_hidden_layers); {FAMILY_LIST}",
    )


def test_plain_transformers_take_their_layers_from_text_config(tmp_path: Path) -> None:
    assert ssm_state({"model_type": "x", "text_config": {"num_hidden_layers": 2}}).ssm_layers == 0
    assert ssm_state({"model_type": "x", "num_hidden_layers": 0}).ssm_layers == 0
    refused(
        {"model_type": "x", "num_hidden_layers": "2", "text_config": {"num_hidden_layers": 2}},
        "field 'model_type': unknown model_type 'x' is not a plain transformer (no integer "
        f"num_hidden_layers); {FAMILY_LIST}",
    )


def test_a_plain_transformer_state(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(
        json.dumps({"model_type": "llama", "num_hidden_layers": 2, "torch_dtype": "float16"})
    )
    state = ssm_state(path, tp_size=2, layout="sglang", speculative_tokens=3, ssm_dtype="fp16")
    # No recurrent layer: no state, nothing to split, no attention without heads.
    assert (state.family, state.model_type, state.ssm_layers) == ("transformer", "llama", 0)
    assert (state.groups, state.attention, state.layer_indices) == ((), None, ())
    assert (state.conv_shape, state.ssm_shape) == ((), ())
    assert (state.conv_bytes, state.ssm_bytes) == (0, 0)
    assert (state.per_layer_bytes, state.per_sequence_bytes) == (0, 0)
    # The dtypes still follow the layout's rules and the overrides.
    assert (state.conv_dtype, state.conv_dtype_rule) == (
        "bfloat16",
        "SGLang default bfloat16 (sglang/srt/configs/mamba_utils.py:68)",
    )
    assert (state.ssm_dtype, state.ssm_dtype_rule) == ("float16", "override --ssm-dtype")
    # The arguments, and the file it came from.
    assert (state.tp_size, state.layout, state.speculative_tokens) == (2, "sglang", 3)
    assert state.source == str(path)
    state = ssm_state({"model_type": "llama", "num_hidden_layers": 2}, conv_dtype="fp32")
    assert (state.conv_dtype, state.conv_dtype_rule) == ("float32", "override --conv-dtype")
    assert (state.ssm_dtype, state.ssm_dtype_rule) == (
        "float32",
        FOLLOWS_CONV,
    )


def test_a_plain_transformer_with_a_bad_dtype_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "llama", "num_hidden_layers": 2, "dtype": "int8"}))
    error = refused(path, f"{str(path)!a}: transformer config: field 'dtype': unknown dtype 'int8'")
    assert fields_of(error) == (str(path), "transformer", "dtype")


def test_a_wrapper_without_its_own_model_type_is_named_by_the_family() -> None:
    assert ssm_state({"text_config": SMALL_MAMBA2}).model_type == "mamba2"
    assert ssm_state({"model_type": "wrapper", "text_config": SMALL_MAMBA2}).model_type == "wrapper"


def test_wrappers_and_removed_families() -> None:
    assert (
        ssm_state({"model_type": "w", "text_config": 3, "llm_config": SMALL_MAMBA2}).family
        == "mamba2"
    )
    error = refused(
        {"model_type": "w", "llm_config": {"model_type": "plamo2"}},
        "field 'model_type': vLLM served Plamo2 until version 0.26.0; SGLang 0.5.23 has no Plamo2 "
        "('plamo2': vllm/model_executor/models/registry.py:841-895)",
    )
    assert fields_of(error) == (None, "plamo2", "model_type")
    lfm2 = {
        "model_type": "lfm2",
        "num_hidden_layers": 1,
        "layer_types": ["conv"],
        "hidden_size": 4,
        "conv_L_cache": 2,
    }
    assert (
        ssm_state(
            {"model_type": "lfm2_vl", "text_config": 1, "llm_config": lfm2}, layout="sglang"
        ).family
        == "lfm2_vl"
    )
    assert (
        ssm_state({"model_type": "lfm2_vl", "text_config": lfm2}, layout="sglang").ssm_shape == ()
    )


def test_a_removed_family_in_a_file_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "bamba", "num_hidden_layers": 2}))
    error = refused(
        path,
        f"{str(path)!a}: field 'model_type': vLLM served Bamba until version 0.23.0; SGLang 0.5.23 "
        "has no Bamba ('bamba': vllm/model_executor/models/registry.py:841-895)",
    )
    assert error.path == str(path)


def test_a_removed_family_in_a_wrappers_text_config_in_a_file_names_the_file(
    tmp_path: Path,
) -> None:
    bamba = {"model_type": "bamba", "num_hidden_layers": 2}
    # A wrapper the package knows (its text config found through WRAPPED), and one it does not.
    for wrapper in ("qwen3_5", "vl"):
        path = tmp_path / f"{wrapper}.json"
        path.write_text(json.dumps({"model_type": wrapper, "text_config": bamba}))
        error = refused(
            path,
            f"{str(path)!a}: field 'model_type': vLLM served Bamba until version 0.23.0; SGLang "
            "0.5.23 has no Bamba ('bamba': vllm/model_executor/models/registry.py:841-895)",
        )
        assert fields_of(error) == (str(path), "bamba", "model_type")
        with pytest.raises(ModelConfigError) as caught:
            text_config(load_config(path))
        assert caught.value.path == str(path)


def test_text_config_and_class_fields_of_a_plain_transformer_are_the_config() -> None:
    plain = {"model_type": "llama", "num_hidden_layers": 2}
    assert text_config(load_config(plain)) == plain
    assert class_fields(plain) == plain
    assert text_config(load_config({"model_type": "vl", "text_config": SMALL_MAMBA2})) == (
        SMALL_MAMBA2
    )


@pytest.mark.parametrize("given", [{}, {"llm_config": {"num_hidden_layers": 2}}])
def test_a_wrapper_the_release_has_no_class_for_must_type_its_text_config(
    given: dict[str, Any],
) -> None:
    # vLLM has no config class for NemotronH_Nano_VL_V2 (its own code builds it, under
    # trust_remote_code), so neither a missing text config nor an untyped one can be built.
    wrapper = {"model_type": "NemotronH_Nano_VL_V2", **given}
    error = refused(
        wrapper,
        "nemotron_h config: field 'text_config.model_type': missing; vLLM 0.33.0 has no config "
        "class for 'NemotronH_Nano_VL_V2' (the checkpoint's own code would build it), so the "
        "text config must say its model_type: 'nemotron_h'",
    )
    assert fields_of(error) == (None, "nemotron_h", "text_config.model_type")


def test_sglang_builds_minicpmv4_6s_default_text_config_when_there_is_none() -> None:
    # SGLang's MiniCPMV4_6Config refuses a text_config without model_type (above) but builds the
    # default Qwen3_5TextConfig when there is none. That class pops full_attention_interval
    # (transformers configuration_qwen3_5.py: kwargs.pop("full_attention_interval", 4)), which
    # SGLang counts linear layers by (configs/qwen3_next.py:259-268): the refusal is the
    # interval's, not the text config's.
    refused(
        {"model_type": "minicpmv4_6"},
        "minicpmv4_6 config: field 'full_attention_interval': missing; SGLang 0.5.23 counts "
        "linear layers by it alone (configs/qwen3_next.py:259-268)",
        layout="sglang",
    )


def test_a_wrapper_without_text_config_in_a_file_names_it(tmp_path: Path) -> None:
    # Issue 27: a class that cannot build a text config without one is refused, naming it.
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "minicpmv4_6", "text_config": {}}))
    error = refused(
        path,
        f"{str(path)!a}: minicpmv4_6 config: field 'text_config.model_type': missing; "
        "MiniCPMV4_6Config (SGLang 0.5.23, sglang/srt/configs/minicpmv4_6.py:96) refuses a "
        "text_config without model_type (KeyError: 'Unknown text_config model_type: None'); "
        "give model_type 'qwen3_5_text' in text_config",
        layout="sglang",
    )
    assert error.path == str(path)


def test_a_wrapped_model_type_that_is_not_a_string_names_no_family() -> None:
    # A list or mapping cannot key the family table; the wrapper is read as a plain model.
    for odd in (["mamba"], {"name": "mamba"}):
        state = ssm_state(
            {"model_type": "llava", "num_hidden_layers": 2, "text_config": {"model_type": odd}}
        )
        assert (state.family, state.ssm_layers, state.per_sequence_bytes) == ("transformer", 0, 0)


@pytest.mark.parametrize("layout", ["vllm", "sglang"])
def test_nemotron_h_vl_under_llm_config(layout: str) -> None:
    # Issue 17: refused before. SGLang reads llm_config; vLLM maps it to text_config.
    wrapper = {
        "model_type": "NemotronH_Nano_VL_V2",
        "llm_config": config("nemotron-nano-9b-v2.json"),
    }
    state = ssm_state(wrapper, layout=layout)
    assert (state.family, state.model_type, state.ssm_layers) == (
        "nemotron_h",
        "NemotronH_Nano_VL_V2",
        27,
    )
    assert state.per_sequence_bytes == 27 * (3 * 12288 * 2 + 128 * 80 * 128 * 4)


@pytest.mark.parametrize(
    ("model_type", "name", "version"),
    [
        ("bamba", "Bamba", "0.23.0"),
        ("plamo2", "Plamo2", "0.26.0"),
        ("phi4flash", "Phi4Flash", "0.10.2"),
        ("minimax", "MiniMax", "0.23.0"),
        ("minimax_text_01", "MiniMax-Text-01", "0.23.0"),
        ("minimax_m1", "MiniMax-M1", "0.23.0"),
        ("minimax_vl_01", "MiniMax-VL-01", "0.23.0"),
    ],
)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_removed_families_are_refused_as_removed(
    model_type: str, name: str, version: str, layout: str
) -> None:
    fields = {"model_type": model_type, "num_hidden_layers": 4, "mamba_d_state": 16}
    with pytest.raises(ModelConfigError) as caught:
        ssm_state(fields, layout=layout)
    assert str(caught.value) == (
        f"field 'model_type': vLLM served {name} until version {version}; SGLang 0.5.23 has no "
        f"{name} ('{model_type}': vllm/model_executor/models/registry.py:841-895)"
    )
    assert (caught.value.field, caught.value.family) == ("model_type", model_type)
    wrapped = {"model_type": "vl", "text_config": fields}
    assert "vLLM served" in refusal(wrapped, layout=layout)


def test_minimax_m1_is_refused_as_removed_not_for_its_layernorm_fields() -> None:
    message = refusal(CONFIGS / "minimax-m1.json")
    assert "vLLM served MiniMax-M1 until version 0.23.0" in message
    assert "layernorm" not in message


def test_a_wrapper_without_its_text_config_is_its_class_default() -> None:
    # Issue 27: a wrapper's class builds its default text config when the file gives none
    # (transformers' Lfm2VlConfig: Lfm2Config(), every layer attention, no conv layer).
    for layout in ("vllm", "sglang"):
        assert ssm_state({"model_type": "lfm2_vl"}, layout=layout).ssm_layers == 0


def test_an_os_error_without_an_os_reason_is_named_by_its_own_words() -> None:
    # An OSError raised with a message only (no errno, no strerror: a file-like object's own
    # failure) keeps that message as the reason.
    from decode_ring.models.loading import cannot_read

    error = cannot_read("config.json", OSError("the disk went away"))
    assert (str(error), error.path) == (
        "cannot read 'config.json': the disk went away",
        "config.json",
    )


def test_a_file_refused_for_its_bytes_names_its_path(tmp_path: Path) -> None:
    # Not UTF-8, larger than 16 MiB, a NUL in the name: each refusal's path is the file's.
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe{")
    large = tmp_path / "large.json"
    large.write_bytes(b" " * (16 * 2**20 + 1))
    for path in (binary, large):
        with pytest.raises(ModelConfigError) as caught:
            ssm_state(path)
        assert caught.value.path == os.fspath(path)
    assert str(caught.value) == f"cannot read {os.fspath(large)!a}: larger than 16 MiB"
    nul = f"{tmp_path}/a\0b.json"
    with pytest.raises(ModelConfigError) as caught:
        ssm_state(nul)
    assert caught.value.path == nul


def test_a_negative_json_integer_of_the_most_digits_is_read() -> None:
    from decode_ring.models.loading import read_json_object

    # 4,300 digits (the interpreter's own limit, and MAX_INTEGER_DIGITS); the sign is no digit.
    digits = "7" * 4300
    assert read_json_object(f'{{"n": -{digits}}}', "x") == {"n": -int(digits)}
    with pytest.raises(ModelConfigError) as caught:
        read_json_object(f'{{"n": -7{digits}}}', "x")
    assert str(caught.value) == "x: a JSON integer of 4,301 digits; a config's have at most 4,300"


def test_a_lower_interpreter_limit_on_integer_digits_is_the_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from decode_ring.models.loading import read_json_object

    monkeypatch.setattr(sys, "get_int_max_str_digits", lambda: 640)
    assert read_json_object(f'{{"n": {"7" * 640}}}', "x") == {"n": int("7" * 640)}
    with pytest.raises(ModelConfigError) as caught:
        read_json_object(f'{{"n": {"7" * 641}}}', "x")
    assert str(caught.value) == "x: a JSON integer of 641 digits; a config's have at most 640"


def test_an_interpreter_without_a_digit_limit_takes_max_integer_digits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from decode_ring.models.loading import read_json_object

    # Before 3.10.7 sys has no get_int_max_str_digits: the package's own 4,300 is the limit.
    monkeypatch.delattr(sys, "get_int_max_str_digits")
    assert read_json_object(f'{{"n": {"7" * 4300}}}', "x") == {"n": int("7" * 4300)}
    with pytest.raises(ModelConfigError) as caught:
        read_json_object(f'{{"n": {"7" * 4301}}}', "x")
    assert str(caught.value) == "x: a JSON integer of 4,301 digits; a config's have at most 4,300"


def test_a_bounded_read_asks_for_one_byte_past_16_mib_and_no_more() -> None:
    from decode_ring.models.loading import TooLarge, read_bounded

    asked: list[int] = []

    def endless(size: int) -> bytes:
        asked.append(size)
        return b" " * size

    with pytest.raises(TooLarge):
        read_bounded(endless)
    # 16 chunks of 1 MiB, then the one byte that shows the stream is larger than 16 MiB.
    assert asked == [2**20] * 16 + [1]
