"""The families as a whole: the README's table of every family and what each server does with it,
and importing the package imports no models module.
"""

from __future__ import annotations

from pathlib import Path

from decode_ring.models import LAYOUTS, ssm_state

from .support import CONFIGS

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
