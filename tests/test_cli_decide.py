"""``decode-ring decide``: the depth the runtime would choose here and now, the rule that chose
it, and the environment it read.

Every command line runs through ``cli.main`` in this process over a stand-in for the once-cell
(the ``cell`` fixture), with the ring's variables unset unless a test sets them.
"""

from __future__ import annotations

import os
import re

import pytest

from decode_ring import CORE

from .support import FakeCell, run, run_json, usage_error

NEMOTRON = "tests/configs/nemotron-nano-9b-v2.json"


def test_decide_text(cell: FakeCell, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "decide", "--ssm-layers", "48")
    assert (status, err) == (0, "")
    assert out == (
        "ring depth                     8\n"
        "rule                           default\n"
        "skip reason                    -\n"
        "ssm layers                     48\n"
        "speculative                    no\n"
        "published                      none\n"
        "METRALE_SSM_DECODE_RING        (unset)\n"
        "METRALE_DISABLE_WATCHDOGS      (unset)\n"
        "METRALE_SSM_RESERVE_RING_FULL  (unset)\n"
        f"core                           {CORE}\n"
    )


def test_decide_text_says_speculative_decode_and_the_published_depth(
    cell: FakeCell, capsys: pytest.CaptureFixture[str]
) -> None:
    # The reference's order: no SSM layers, then the published depth, then the variable, then
    # speculative decode (decide_decode_ring_slots). Speculative decode skips the ring...
    status, out, err = run(capsys, "decide", "--ssm-layers", "27", "--speculative")
    assert (status, err) == (0, "")
    rows = dict(re.split(r"\s{2,}", line, maxsplit=1) for line in out.splitlines())
    assert (rows["ring depth"], rows["rule"], rows["skip reason"]) == (
        "0",
        "speculative decode",
        "speculative decode active",
    )
    assert (rows["speculative"], rows["published"]) == ("yes", "none")
    # ...unless a depth is published, which wins and is shown.
    cell.value = 4
    status, out, err = run(capsys, "decide", "--ssm-layers", "27", "--speculative")
    assert (status, err) == (0, "")
    rows = dict(re.split(r"\s{2,}", line, maxsplit=1) for line in out.splitlines())
    assert (rows["ring depth"], rows["speculative"], rows["published"]) == ("4", "yes", "4")


def test_decide_json_speculative(cell: FakeCell, capsys: pytest.CaptureFixture[str]) -> None:
    status, out = run_json(capsys, "decide", "--ssm-layers", "48", "--speculative")
    assert status == 0
    assert out == {
        "slots": 0,
        "skip_reason": "speculative decode active",
        "rule": "speculative decode",
        "ssm_layers": 48,
        "speculative": True,
        "published": None,
        "environment": {
            "METRALE_SSM_DECODE_RING": None,
            "METRALE_DISABLE_WATCHDOGS": None,
            "METRALE_SSM_RESERVE_RING_FULL": None,
        },
        "environment_not_utf8": [],
        "core": CORE,
    }


def test_decide_pins_a_depth_first(cell: FakeCell, capsys: pytest.CaptureFixture[str]) -> None:
    status, out = run_json(capsys, "decide", "--ssm-layers", "48", "--ssm-decode-ring-slots", "3")
    assert (status, out["slots"], out["rule"], out["published"]) == (0, 3, "published", 3)
    assert cell.writes == [3]


def test_decide_auto_pins_nothing(cell: FakeCell, capsys: pytest.CaptureFixture[str]) -> None:
    status, out = run_json(
        capsys, "decide", "--ssm-layers", "48", "--ssm-decode-ring-slots", "auto"
    )
    assert (status, out["slots"], out["rule"]) == (0, 8, "default")
    assert cell.writes == []


def test_pinning_against_another_published_depth_is_a_usage_error(
    cell: FakeCell, capsys: pytest.CaptureFixture[str]
) -> None:
    cell.value = 4
    message = usage_error(capsys, "decide", "--ssm-layers", "48", "--ssm-decode-ring-slots", "2")
    assert message == "a ring depth of 4 is already published"
    assert usage_error(capsys, "fit", "--example", "--ssm-decode-ring-slots", "0") == message
    assert cell.writes == [2, 0]


def test_decide_needs_ssm_layers(cell: FakeCell, capsys: pytest.CaptureFixture[str]) -> None:
    assert usage_error(capsys, "decide") == "decide needs --ssm-layers N (or --config)"


def test_counts_read_leading_zeros_and_plus(
    cell: FakeCell, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out = run_json(capsys, "decide", "--ssm-layers", "+007")
    assert (status, out["ssm_layers"]) == (0, 7)
    status, out = run_json(capsys, "decide", "--ssm-layers", "0")
    assert (status, out["ssm_layers"], out["rule"]) == (0, 0, "no SSM layers")


def test_decide_takes_the_ssm_layers_from_the_model(
    cell: FakeCell, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out = run_json(capsys, "decide", "--config", NEMOTRON)
    assert (status, out["ssm_layers"], out["slots"]) == (0, 27, 8)
    assert usage_error(capsys, "decide", "--config", NEMOTRON, "--ssm-layers", "4") == (
        "--config gives the SSM layers: drop --ssm-layers"
    )


def test_layer_counts_have_one_limit(cell: FakeCell, capsys: pytest.CaptureFixture[str]) -> None:
    # The models refuse more than 100,000 layers in a config; so does --ssm-layers.
    assert usage_error(capsys, "decide", "--ssm-layers", "100001") == (
        "argument --ssm-layers: 100001 layers is implausible (at most 100,000)"
    )
    status, out = run_json(capsys, "decide", "--ssm-layers", "100000")
    assert (status, out["ssm_layers"]) == (0, 100_000)


def test_a_value_that_is_not_utf8_is_shown_as_such(
    cell: FakeCell, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    if not os.supports_bytes_environ:
        pytest.skip("no bytes environment here")
    monkeypatch.setitem(os.environb, b"METRALE_DISABLE_WATCHDOGS", b"\xff")
    monkeypatch.setenv("METRALE_SSM_DECODE_RING", "<not valid Unicode>")
    _, out = run_json(capsys, "decide", "--ssm-layers", "4")
    assert out["environment"]["METRALE_DISABLE_WATCHDOGS"] is None
    assert out["environment"]["METRALE_SSM_DECODE_RING"] == "<not valid Unicode>"
    assert out["environment_not_utf8"] == ["METRALE_DISABLE_WATCHDOGS"]
    _, text, _ = run(capsys, "decide", "--ssm-layers", "4")
    assert "METRALE_DISABLE_WATCHDOGS      (not valid UTF-8)\n" in text
    assert "METRALE_SSM_DECODE_RING        '<not valid Unicode>'\n" in text


@pytest.mark.parametrize(
    ("env", "args", "slots", "rule"),
    [
        ({}, ["--ssm-layers", "0"], 0, "no SSM layers"),
        (
            {"METRALE_SSM_DECODE_RING": "0"},
            ["--ssm-layers", "48", "--ssm-decode-ring-slots", "4"],
            4,
            "published",
        ),
        (
            {"METRALE_SSM_DECODE_RING": "1"},
            ["--ssm-layers", "48", "--speculative"],
            8,
            "METRALE_SSM_DECODE_RING=1",
        ),
        ({"METRALE_SSM_DECODE_RING": "0"}, ["--ssm-layers", "48"], 0, "METRALE_SSM_DECODE_RING=0"),
        ({}, ["--ssm-layers", "48", "--speculative"], 0, "speculative decode"),
        ({"METRALE_DISABLE_WATCHDOGS": " True "}, ["--ssm-layers", "48"], 0, "watchdogs disabled"),
        ({}, ["--ssm-layers", "48", "--ssm-decode-ring-slots", "auto"], 8, "default"),
    ],
)
def test_decide_names_the_rule(
    cell: FakeCell,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    env: dict[str, str],
    args: list[str],
    slots: int,
    rule: str,
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    status, report = run_json(capsys, "decide", *args)
    assert status == 0
    assert (report["slots"], report["rule"]) == (slots, rule)
    assert set(report) >= {"slots", "skip_reason", "rule", "environment"}
    for name, value in env.items():
        assert report["environment"][name] == value


def test_decide_human_output(
    cell: FakeCell, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("METRALE_DISABLE_WATCHDOGS", "1")
    status, out, _ = run(capsys, "decide", "--ssm-layers", "48")
    assert status == 0
    lines = out.splitlines()
    rows = dict(re.split(r"\s{2,}", line, maxsplit=1) for line in lines)
    assert rows["ring depth"] == "0"
    assert rows["skip reason"] == "watchdogs disabled"
    assert rows["METRALE_DISABLE_WATCHDOGS"] == "'1'"
    assert rows["METRALE_SSM_DECODE_RING"] == "(unset)"
    # one column of values, whatever the length of the labels
    assert len({line.index(rows[line.split("  ")[0]]) for line in lines}) == 1


def test_an_echoed_value_with_a_newline_stays_on_one_line(
    cell: FakeCell, capsys: pytest.CaptureFixture[str]
) -> None:
    message = usage_error(capsys, "decide", "--ssm-layers", "48", "--ssm-decode-ring-slots", "1\n")
    assert message == (
        "argument --ssm-decode-ring-slots: unknown ssm-decode-ring-slots '1\\n' "
        "(valid: auto, 0..=8)"
    )
