"""The rendered output of ``decode-ring``, whole, against the golden files of ``tests/golden/``.

One case a file: ``tests/golden/cases.json`` names each case's command line, exit status, stdin
and stderr; ``python -m tests.golden --check`` shows what differs as a unified diff, and
``--update`` rewrites the files (see ``tests/golden/__init__.py``). The figures in the files
were first written out in the tests they replace, from the servers' wheels and the README:

- ``fit-example``, ``state-nemotron-nano-9b-v2``, ``plan-nemotron-nano-9b-v2``: the README's own
  outputs, run here in the test process (the README's check runs them in a fresh one);
- ``vllm-*`` and ``sglang-*`` text: each term beside the rule and the wheel file:lines it comes
  from (the citations of vllm.py's and sglang.py's docstrings), the server's figure beside the
  naive B x per-sequence one; the figures are the peer oracle's
  (``tools/peer_agreement/reservations.py`` run from the wheels), Nemotron under ReplaySSM at 16
  as tests/test_servers_vllm.py pins it; mamba-2.8b-hf read from stdin, which has no path;
- ``vllm-*`` and ``sglang-*`` JSON: every field of ten answers, the oracle's figures (the fixed
  pool of mamba-2.8b-hf without a budget is SGLang's flag K and (K + 1) x the per-request bytes
  the oracle gives for that model; the ReplaySSM ring of 8 is half the wheel's 368,640 B at 16,
  append_replayssm_ring, mamba_utils.py:213-246). Rule and assumption texts are the package's
  own wording of the rules cited in vllm.py and sglang.py, pinned so that each rule an answer
  reports is the one its figure came from.

The cases added for the renderers' mutation pass (issue 24) each reach a branch of
``cli/render`` that no other case did: the ring lines of ``state --layout metrale`` and a label
column wider than 22 (Qwen3-Next's ``recurrent bytes per layer``; 80,216,064 B x 8 = 641,728,512
B a slot, x 8 slots = 5,133,828,096 B; at tp 2 under vLLM 19,759,104 B x 8 = 158,072,832 B); the
GPU budget lines of ``vllm`` and ``sglang`` under ``--gpu`` and ``--gpu-memory`` (no GPU name:
``-``), and ``--gpu`` beside ``--available-memory`` (no budget lines); a release given as a
minor or a post release (the note after the first line); ``--compare`` on to a newer release,
back to one that refuses the model, across a release with no rule change and no figure moved
(``nothing``); a launch line's flags without effect, ignored and given twice; ``plan --server``
under the server's own budget, by GPU name (JSON) and by memory alone, with a row that does not
start (budget ``-``).
"""

from __future__ import annotations

import pytest

from . import golden
from .support import FakeCell

CASES = golden.load_cases()


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
@pytest.mark.usefixtures("ring_environment")
def test_the_output_is_the_golden_file(case: golden.Case) -> None:
    status, stdout, stderr = golden.run(case)
    assert (status, stderr) == (case.status, case.stderr)
    if case.is_json:
        assert stdout.count("\n") == 1  # one line of JSON, indented only in the file
    expected = case.path.read_text(encoding="utf-8")
    actual = golden.as_golden(case, stdout)
    assert actual == expected, golden.diff(case, expected, actual)


def test_every_golden_file_has_its_case() -> None:
    files = {path.name for path in golden.GOLDEN.glob("*.txt")}
    files |= {path.name for path in golden.GOLDEN.glob("*.json")} - {"cases.json"}
    assert files == {case.path.name for case in CASES}
    assert len({case.name for case in CASES}) == len(CASES)


def test_a_case_that_publishes_publishes_into_the_stand_in(cell: FakeCell) -> None:
    # fit --example lowers the ring to 1 and publishes it: into golden.run's own stand-in,
    # never into the process's once-cell nor into another stand-in.
    (example,) = [case for case in CASES if case.argv == ("fit", "--example")]
    assert golden.run(example)[0] == 0
    assert cell.writes == []
