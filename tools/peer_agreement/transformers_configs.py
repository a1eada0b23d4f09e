"""Configs generated from transformers' own config classes, for the families without a
released config among the fixtures: ``AutoConfig.for_model(model_type).to_dict()`` for every
``model_type`` of the checkout's ``decode_ring.models.FAMILIES`` that the installed
transformers has a config class for, with ``architectures`` set to transformers' own model
class for it (``MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES`` first, then
``MODEL_FOR_CAUSAL_LM_MAPPING_NAMES``; transformers leaves it None).

Run in a subprocess (``generate``): the oracle's process has a stubbed ``transformers``.
As a script: ``python transformers_configs.py REPO OUT_DIR`` writes
``OUT_DIR/<model_type>.transformers-<version>.json`` and prints one JSON line: the written
files and the model types transformers has no class for.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

# transformers 5.23 names bailing_hybrid's model BailingHybridForCausalLM, which neither peer
# serves; both serve bailing_hybrid configs as BailingMoeV2_5ForCausalLM (lightning linear
# attention: V:vllm/model_executor/models/registry.py:81, S:sglang/srt/models/
# bailing_moe_linear.py:1585) and BailingMoeV3ForCausalLM (KDA: V:registry.py:82,
# S:sglang/srt/models/bailing_moe_v3.py:2059): one config for each.
PEER_ARCHITECTURES: dict[str, tuple[str, ...]] = {
    "bailing_hybrid": ("BailingMoeV2_5ForCausalLM", "BailingMoeV3ForCausalLM"),
}


def generate(repo: Path, out_dir: Path) -> tuple[list[Path], list[str]]:
    """Write the configs under ``out_dir``; return the files and the model types skipped."""
    done = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), str(repo), str(out_dir)],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "DECODE_RING_NO_EXTENSIONS": "1"},
    )
    if done.returncode:
        raise RuntimeError(f"transformers config generation failed: {done.stderr.strip()}")
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    return [Path(item) for item in answer["files"]], list(answer["skipped"])


# Properties of transformers' config classes that ``to_dict`` leaves out but a peer reads off
# the config object (the oracle reads a config.json as plain attributes): NemotronHConfig's
# ``hybrid_override_pattern`` (V:vllm/model_executor/models/nemotron_h.py:292). Only these:
# a property a peer's own config class redefines (FalconH1Config.layers_block_type) must not
# be set as a field.
READ_PROPERTIES: dict[str, tuple[str, ...]] = {"nemotron_h": ("hybrid_override_pattern",)}


def _main(repo: str, out_dir: str) -> None:
    sys.path.insert(0, repo)
    import transformers
    from transformers import AutoConfig
    from transformers.models.auto import modeling_auto

    from decode_ring.models import FAMILIES

    tables = (
        modeling_auto.MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES,
        modeling_auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
    )
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    files: list[str] = []
    skipped: list[str] = []
    for model_type in FAMILIES:
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
            path = out / f"{model_type}{suffix}.transformers-{transformers.__version__}.json"
            path.write_text(json.dumps(mapping, indent=1, default=str), encoding="utf-8")
            files.append(str(path))
    print(json.dumps({"files": files, "skipped": skipped}))


if __name__ == "__main__":
    _main(sys.argv[1], sys.argv[2])


def generate_pinned(python: str, repo: Path, out_dir: Path) -> tuple[list[Path], list[str]]:
    """``config_classes.py defaults`` under ``python`` (a pinned transformers), for every family
    and wrapper model type of the checkout: transformers' default config of each."""
    listed = subprocess.run(
        [
            sys.executable,
            "-c",
            "import json, sys; sys.path.insert(0, sys.argv[1]); "
            "from decode_ring.models.families import REGISTRY, WRAPPED; "
            "print(json.dumps(sorted({*REGISTRY, *WRAPPED, "
            "*(t for f in REGISTRY.values() for t in f.model_types)})))",
            str(repo),
        ],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "DECODE_RING_NO_EXTENSIONS": "1"},
    )
    model_types = json.loads(listed.stdout.strip().splitlines()[-1])
    script = Path(__file__).resolve().with_name("config_classes.py")
    done = subprocess.run(
        [python, str(script), "defaults", str(out_dir), *model_types],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode:
        raise RuntimeError(f"transformers config generation failed: {done.stderr.strip()}")
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    return [Path(item) for item in answer["files"]], list(answer["skipped"])
