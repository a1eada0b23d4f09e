"""What vLLM and SGLang really reserve for a hybrid model's recurrent state, release by release
(``decode_ring.releases``), and the reference server's ring beside them.

``vllm_reservation`` and ``sglang_reservation`` take a model's ``config.json`` and the flags of a
launch line (the servers' own names and defaults) and return, per tensor-parallel rank, every term
of what the server's own sizing code computes, with the naive ``B x per-sequence`` figure beside
it; ``metrale`` is the reference's live state and decode-rollback ring through
``decode_ring.preflight``. Bad arguments raise ``ServerArgumentError`` (a ``ValueError`` that names
the argument) or ``TypeError``. ``compare_releases`` sets one launch under two releases of a
server side by side, with the rules that changed between them.
"""

from __future__ import annotations

from .common import GPU_ARCHS, ServerArgumentError, multiple
from .compare import CompareStep, ReleaseComparison, compare_releases
from .metrale import MetraleReservation, metrale
from .sglang import SglangReservation, sglang_reservation
from .vllm import VllmReservation, vllm_reservation

__all__ = [
    "GPU_ARCHS",
    "CompareStep",
    "MetraleReservation",
    "ReleaseComparison",
    "ServerArgumentError",
    "SglangReservation",
    "VllmReservation",
    "compare_releases",
    "metrale",
    "multiple",
    "sglang_reservation",
    "vllm_reservation",
]
