"""``plan --server`` reads each server's own reservation and never recomputes it: every batch it
shows under SGLang is what ``decode-ring sglang`` says the same launch runs.

The plan's largest batch under SGLang is ``min(max_running_requests, kv_tokens // length)`` of
``sglang_reservation`` for the same model, tensor-parallel size, budget (free memory less the
weights and ``--other``) and ``--context-length`` of ``--max-model-len``; a budget SGLang
refuses to start with is a row that holds no batch, with SGLang's own refusal.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from decode_ring.models import LoadedConfig, ModelConfigError, load_config
from decode_ring.plan import Reserve, server_plan
from decode_ring.servers import ServerArgumentError, sglang_reservation

CONFIGS = Path(__file__).resolve().parent / "configs"
GIB = 2**30
TP_SIZES = (1, 2, 4, 8)
BUDGETS_GIB = range(20, 91)
LENGTHS = (4096, 32768, 131072)


def fixtures() -> list[Path]:
    return sorted(CONFIGS.glob("*.json"))


def reservation_batch(config: LoadedConfig, tp: int, budget: int, length: int) -> int | str:
    """The batch ``decode-ring sglang`` says the launch runs, or its refusal."""
    try:
        pool = sglang_reservation(
            config, tp_size=tp, available_memory=budget, context_length=length
        )
    except ServerArgumentError as error:
        return str(error)
    assert pool.kv_tokens is not None
    return min(pool.max_running_requests, pool.kv_tokens // length)


@pytest.mark.parametrize("path", fixtures(), ids=lambda path: path.stem)
def test_the_sglang_plan_is_the_sglang_reservation(path: Path) -> None:
    config = load_config(path)
    compared = 0
    for length in LENGTHS:
        for budget_gib in BUDGETS_GIB:
            budget = budget_gib * GIB
            try:
                plan = server_plan(
                    "sglang", config, budget, Reserve(0, "--weights", 0, length), TP_SIZES
                )
            except ModelConfigError as error:
                refused: str | None = str(error)
            else:
                refused = None
            if refused is not None:
                # The plan refuses what the reservation refuses, with the same words.
                assert refused == first_refusal(config, budget, length)
                continue
            for row in plan.rows:
                if row.problem is not None:
                    continue
                expected = reservation_batch(config, row.tp_size, budget, length)
                shown = row.largest_batch if row.refusal is None else row.refusal
                if isinstance(expected, str):
                    assert (row.largest_batch, shown) == (0, expected)
                else:
                    assert shown == expected
                    assert row.fits == tuple(batch <= expected for batch in plan.batch_sizes)
                compared += 1
    # Every fixture SGLang serves is compared somewhere on the grid.
    assert compared > 0 or plan_refused_everywhere(config)


def first_refusal(config: LoadedConfig, budget: int, length: int) -> str | None:
    """The first refusal of the launch over the plan's tensor-parallel sizes, if any."""
    for tp in TP_SIZES:
        try:
            sglang_reservation(config, tp_size=tp, available_memory=budget, context_length=length)
        except ModelConfigError as error:
            return str(error)
    return None


def plan_refused_everywhere(config: LoadedConfig) -> bool:
    try:
        server_plan("sglang", config, 90 * GIB, Reserve(0, "--weights", 0, 4096), TP_SIZES)
    except ModelConfigError:
        return True
    return False


def test_the_off_by_one_of_issue_24_is_gone() -> None:
    # GLM-5.3-Flash, 34 GiB, 131,072 tokens, tp 1: SGLang's KV pool of 1,692,836 tokens at
    # 11,363 B per token (the DSA indexer's keys included) holds 12 sequences; the plan once
    # said 13, from a KV size per token of its own that left out the indexer (11,264 B).
    config = CONFIGS / "written" / "glm5-next-transformers-5.23.0.json"
    plan = server_plan("sglang", config, 34 * GIB, Reserve(0, "--weights", 0, 131072), (1,))
    pool = sglang_reservation(config, available_memory=34 * GIB, context_length=131072)
    assert (pool.kv_tokens, pool.kv_bytes_per_token) == (1_692_836, 11_363)
    assert plan.rows[0].largest_batch == 12 == 1_692_836 // 131_072
