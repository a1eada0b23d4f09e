"""Speculative decoding's draft tokens: vLLM widens the conv window; SGLang and metrale keep it.

Every expected number is written out from the checkpoint's published config values (the products
spell the fields: layers x (conv window x channels x bytes + heads x head dim x d_state x bytes)),
or from the wheels' code (vllm-0.33.0, sglang-0.5.23, cited file:lines; the same cases run through
the servers' own functions in tools/peer_agreement), never computed by the code under test.
Families with no public checkpoint (tests/configs/PROVENANCE.md) are read from transformers 5.23's
own ``to_dict()``, or from configs written out from the fields the wheels read
(tests/configs/written/, not released checkpoints).
"""

from __future__ import annotations

import pytest

from decode_ring.models import ssm_state

from .support import config


@pytest.mark.parametrize(
    ("name", "window"),
    [
        ("mamba-codestral-7b.json", 3 + 3),
        ("nemotron-nano-9b-v2.json", 3 + 3),
        ("qwen3-next-80b-a3b-instruct.json", 3 + 3),
        # vLLM's mamba1_state_shape takes no num_spec.
        ("mamba-2.8b-hf.json", 3),
        ("jamba-mini-1.5.json", 3),
    ],
)
def test_speculative_tokens_widen_the_vllm_conv_window(name: str, window: int) -> None:
    state = ssm_state(config(name), speculative_tokens=3)
    assert state.conv_shape[0] == window
    assert state.speculative_tokens == 3
    assert state.ssm_shape == ssm_state(config(name)).ssm_shape


@pytest.mark.parametrize("layout", ["sglang", "metrale"])
def test_speculative_tokens_leave_sglang_and_metrale_alone(layout: str) -> None:
    qwen = config("qwen3-next-80b-a3b-instruct.json")
    assert ssm_state(qwen, layout=layout, speculative_tokens=5).per_sequence_bytes == (
        ssm_state(qwen, layout=layout).per_sequence_bytes
    )
