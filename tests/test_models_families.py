"""The families as a whole: the README's table of every family and what each server does with it,
and importing the package imports no models module.
"""

from __future__ import annotations

from pathlib import Path

from decode_ring.models import LAYOUTS, ssm_state

from .support import CONFIGS, refused, written

TABLE_FIXTURES = {
    "falcon_h1": "falcon-h1-7b-instruct.json",
    "falcon_mamba": "falcon-mamba-7b.json",
    "granitemoehybrid": "granite-4.0-h-tiny.json",
    "jamba": "jamba-mini-1.5.json",
    "jet_nemotron": "jet-nemotron-2b.json",
    "kimi_linear": "kimi-linear-48b-a3b-instruct.json",
    "mamba": "mamba-2.8b-hf.json",
    "mamba2": "mamba-codestral-7b.json",
    "minicpm_sala": "minicpm-sala.json",
    "nemotron_h": "nemotron-nano-9b-v2.json",
    "qwen3_5": "qwen3.5-27b.json",
    "qwen3_5_moe": "qwen3.5-35b-a3b.json",
    "qwen3_next": "qwen3-next-80b-a3b-instruct.json",
    "zamba2": "zamba2-2.7b.json",
    "zaya": "zaya1-8b-legacy.json",
}


def test_the_readme_family_table_lists_every_family_with_its_servers() -> None:
    from decode_ring.models import REGISTRY
    from decode_ring.units import format_size

    readme = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")
    rows = [line for line in readme.splitlines() if line.startswith("| `")]
    table = {}
    for row in rows:
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        if len(cells) == 7:
            table[cells[0].strip("`")] = cells[1:]
    assert sorted(table) == sorted(REGISTRY)
    absent = {"vllm": "not in vLLM", "sglang": "not in SGLang"}
    for family, (_, checkpoint, layers, *sizes) in table.items():
        served = {"vllm": REGISTRY[family].vllm, "sglang": REGISTRY[family].sglang}
        for layout, cell in zip(LAYOUTS, sizes, strict=True):
            if layout in served and served[layout] is None:
                assert cell == absent[layout], (family, layout)
            elif family not in TABLE_FIXTURES:
                assert (checkpoint, layers, cell) == ("no public config", "-", "served")
            else:
                state = ssm_state(CONFIGS / TABLE_FIXTURES[family], layout=layout)
                assert cell == format_size(state.per_sequence_bytes), (family, layout)
                assert layers == str(state.ssm_layers)


def test_importing_decode_ring_imports_no_models_module() -> None:
    import subprocess
    import sys

    root = Path(__file__).parent.parent
    script = (
        "import sys, decode_ring; "
        "print(sorted(m for m in sys.modules if m.startswith('decode_ring.models')))"
    )
    completed = subprocess.run(
        [sys.executable, "-c", script], cwd=root, capture_output=True, text=True, check=True
    )
    assert completed.stdout == "[]\n"


def test_a_layer_list_disagreeing_with_num_hidden_layers_is_refused_without_a_class() -> None:
    # vLLM has no class for nemotron_h_puzzle (the checkpoint's own code builds it), so the file's
    # num_hidden_layers stands beside its 52-entry layer list: vLLM counts layers by the former
    # (vllm/config/model.py:1708-1725) and builds them by the pattern (models/nemotron_h.py:614).
    puzzle = written("nemotron-h-puzzle-sglang-0.5.23-defaults.json")
    error = refused(
        puzzle | {"num_hidden_layers": 51},
        "nemotron_h_puzzle config: field 'layers_block_type': has 52 entries but "
        "num_hidden_layers is 51",
    )
    assert error.field == "layers_block_type"
    pattern_only = {key: value for key, value in puzzle.items() if key != "layers_block_type"}
    refused(
        pattern_only | {"num_hidden_layers": 51},
        "nemotron_h_puzzle config: field 'hybrid_override_pattern': has 52 entries but "
        "num_hidden_layers is 51",
    )
    assert ssm_state(pattern_only | {"num_hidden_layers": 52}).ssm_layers == 24
