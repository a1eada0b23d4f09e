"""The reference server's ring beside the servers: ``decode_ring.servers.metrale``, the live state
in the reference's layout and the decode-rollback ring the reference would keep, fitted through
``decode_ring.preflight``.

Nemotron-Nano-9B-v2 in the reference's layout, per layer: conv (4, 12288 / tp) and SSM
(128 / tp, 80, 128), both float32, 27 layers. The ring's depth is the reference's
(``decode_rollback_ring_slots_with``, ../shared/spec/decode_ring.rs): DECODE_ROLLBACK_RING_SLOTS
(8) without speculation, 0 under speculative decode (rule 4).
"""

from __future__ import annotations

import pytest

from decode_ring.servers import ServerArgumentError, metrale, multiple

from .support import NEMOTRON, GiB

_METRALE_PER_SEQUENCE = 27 * (4 * 12288 * 4 + 128 * 80 * 128 * 4)
_METRALE_PER_SEQUENCE_TP2 = 27 * (4 * 6144 * 4 + 64 * 80 * 128 * 4)
_RING_DEPTH = 8
pytestmark = pytest.mark.usefixtures("ring_environment")


def test_metrale_is_the_live_state_and_the_ring() -> None:
    # metrale layout: conv (4, 12288) float32 196,608 B + ssm 5,242,880 B, x 27 layers.
    r = metrale(NEMOTRON, max_batch_size=256)
    assert r.per_sequence_bytes == 27 * (4 * 12288 * 4 + 128 * 80 * 128 * 4)
    assert r.live_state_bytes == 256 * r.per_sequence_bytes
    assert r.requested_slots == r.ring_slots == 8
    assert r.total_bytes == 9 * r.live_state_bytes
    fitted = metrale(NEMOTRON, max_batch_size=256, free_memory=80 * GiB)
    assert fitted.ring_slots == 1
    assert fitted.fit is not None and fitted.fit.warning is not None


# The JSON form is the point here: every field, as metrale's answer carries it.
def test_metrale_json_is_every_field() -> None:
    r = metrale(NEMOTRON, max_batch_size=4, free_memory=80 * GiB)
    live = 4 * _METRALE_PER_SEQUENCE
    assert r.fit is not None
    assert r.as_dict() == {
        "model_type": "nemotron_h",
        "family": "nemotron_h",
        "source": str(NEMOTRON),
        "tp_size": 1,
        "max_batch_size": 4,
        "speculative_tokens": 0,
        "state_layers": 27,
        "per_sequence_bytes": _METRALE_PER_SEQUENCE,
        "live_state_bytes": live,
        "requested_slots": _RING_DEPTH,
        "ring_slots": _RING_DEPTH,
        "ring_bytes": _RING_DEPTH * live,
        "total_bytes": (1 + _RING_DEPTH) * live,
        "free_memory": 80 * GiB,
        "decision": r.fit.decision,
        "refusal": r.fit.refusal,
        "multiplier": 1.0 + _RING_DEPTH,
    }
    assert r.fit.decision.startswith("ssm decode ring: 8 of 8 requested slots")


def test_metrale_speculation_and_tp() -> None:
    r = metrale(NEMOTRON, tp_size=2, speculative_tokens=1)
    assert (r.tp_size, r.speculative_tokens, r.max_batch_size) == (2, 1, 256)
    assert r.per_sequence_bytes == _METRALE_PER_SEQUENCE_TP2
    assert (r.requested_slots, r.ring_slots, r.ring_bytes) == (0, 0, 0)
    assert r.as_dict()["decision"] is None and r.as_dict()["refusal"] is None
    assert r.fit is None


def test_metrale_takes_zero_sequences_and_zero_memory() -> None:
    r = metrale(NEMOTRON, max_batch_size=0, free_memory=0)
    assert (r.live_state_bytes, r.ring_bytes, r.free_memory, r.multiplier) == (0, 0, 0, 1.0)


@pytest.mark.parametrize(
    ("held", "naive", "times"),
    [(3, 2, 1.5), (2, 4, 0.5), (7, 7, 1.0), (0, 0, 1.0), (5, 0, 1.0)],
)
def test_a_multiplier_is_the_held_figure_over_the_naive_one_and_1_where_naive_is_0(
    held: int, naive: int, times: float
) -> None:
    # Every server's multiplier and its rendered "multiplier" column are this one ratio.
    assert multiple(held, naive) == times


def test_metrale_json_carries_the_fits_refusal() -> None:
    # 256 sequences of 146,866,176 B (35.02 GiB) do not fit 1 GiB with any ring.
    r = metrale(NEMOTRON, max_batch_size=256, free_memory=GiB)
    assert r.fit is not None and r.fit.refusal is not None
    assert r.as_dict()["refusal"] == r.fit.refusal
    assert r.fit.refusal.startswith("refused: the reserve without ring alone, 35.02 GiB")


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"tp_size": 0}, "tp_size"),
        ({"speculative_tokens": -1}, "speculative_tokens"),
        ({"free_memory": -1}, "free_memory"),
    ],
)
def test_metrale_refusals_name_the_argument(arguments: dict[str, int], field: str) -> None:
    with pytest.raises(ServerArgumentError) as raised:
        metrale(NEMOTRON, **arguments)
    assert raised.value.field == field
    assert str(raised.value).startswith(f"argument {field}: must be from ")


def test_a_negative_batch_is_refused_naming_the_argument() -> None:
    with pytest.raises(ServerArgumentError) as raised:
        metrale(NEMOTRON, max_batch_size=-1)
    assert raised.value.field == "max_batch_size"
    assert "max_batch_size" in str(raised.value)
    assert "\n" not in str(raised.value)
