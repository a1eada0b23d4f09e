"""The decode_ring side of a comparison, run in its own interpreter with ``--repo`` first on
``sys.path`` (so the checkout under test is what is imported, never the oracle's fake torch).

Reads jobs as JSON lines on stdin, writes one JSON line per job on stdout. A job is
``{"kind": "state", "config": PATH, "tp": N, "spec": N, "layout": "vllm"|"sglang"}`` (with
optional ``"version"`` and ``"view"``, passed to ``ssm_state`` where given) or
``{"kind": "reservation", "server": "vllm"|"sglang", "config": PATH, "arguments": {...}}``.

A state answer is normalised from either shape of ``decode_ring.models``:

* the state contract (``SsmState.groups`` of ``LayerStates`` with ``tensors``), or
* the 0.1 module (``conv_shape``/``ssm_shape``, one kind per family).

A refusal is ``{"refusal": "Type: message"}``. Only the standard library and the checkout are
imported here.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from typing import Any

# The 0.1 module's families and the kind of recurrent layer each holds.
OLD_KINDS = {
    "mamba": "mamba1",
    "jamba": "mamba1",
    "mamba2": "mamba2",
    "nemotron_h": "mamba2",
    "falcon_h1": "mamba2",
    "granitemoehybrid": "mamba2",
    "zamba2": "mamba2",
    "qwen3_next": "gated_delta_net",
}


def _refusal(error: BaseException) -> dict[str, Any]:
    message = " ".join(str(error).split())
    return {"refusal": f"{type(error).__name__}: {message}"}


def _tensor(name: str, shape: Any, dtype: str, size: int) -> dict[str, Any]:
    return {"name": name, "shape": list(shape), "dtype": dtype, "bytes": size}


def normalise(state: Any) -> dict[str, Any]:
    """One ``SsmState`` as plain data, whichever version of the model it is."""
    groups = getattr(state, "groups", None)
    out: dict[str, Any] = {"family": state.family, "api": "groups" if groups is not None else "0.1"}
    if groups is not None:
        out["groups"] = [
            {
                "kind": group.kind,
                "layer_indices": list(group.layer_indices),
                "tensors": [_tensor(t.name, t.shape, t.dtype, t.bytes) for t in group.tensors],
            }
            for group in groups
        ]
    elif state.ssm_layers:
        out["groups"] = [
            {
                "kind": OLD_KINDS.get(state.family, "unknown"),
                "layer_indices": list(state.layer_indices),
                "tensors": [
                    _tensor("conv", state.conv_shape, state.conv_dtype, state.conv_bytes),
                    _tensor("ssm", state.ssm_shape, state.ssm_dtype, state.ssm_bytes),
                ],
            }
        ]
    else:
        out["groups"] = []
    out["per_sequence_bytes"] = state.per_sequence_bytes
    return out


def answer(job: dict[str, Any]) -> dict[str, Any]:
    """The checkout's answer to one job."""
    if job["kind"] == "state":
        from decode_ring.models import ssm_state

        optional = {key: job[key] for key in ("version", "view") if key in job}
        try:
            state = ssm_state(
                job["config"],
                tp_size=job["tp"],
                layout=job["layout"],
                speculative_tokens=job["spec"],
                **optional,
            )
        except Exception as error:
            return _refusal(error)
        return normalise(state)
    try:
        servers: Any = importlib.import_module("decode_ring.servers")
    except ImportError as error:
        return {"missing": f"decode_ring.servers: {error}"}
    function = getattr(servers, f"{job['server']}_reservation")
    try:
        value = function(job["config"], **job["arguments"])
    except Exception as error:
        return _refusal(error)
    data = value.as_dict() if hasattr(value, "as_dict") else dict(vars(value))
    plain: dict[str, Any] = json.loads(json.dumps(data, default=str))
    return plain


def main() -> None:
    repo = sys.argv[1]
    sys.path.insert(0, os.path.abspath(repo))
    for line in sys.stdin:
        if line.strip():
            print(json.dumps(answer(json.loads(line))), flush=True)


if __name__ == "__main__":
    main()
