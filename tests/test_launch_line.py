"""The launch line as the script has it (issue 25): the package's flags first, then ``serve MODEL
...``, ``--model-path MODEL ...`` or ``--`` and the whole command; every flag of the release read
as the server's parser reads it and found in its class table.

Launch lines are the servers' own documentation's and recipes', cited at each; the rules of the
servers' parsers are cited from the wheels (vLLM's ``FlexibleArgumentParser``,
vllm/utils/argparse_utils.py; SGLang's ``prepare_server_args``, sglang/srt/server_args.py:668-720).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

import decode_ring.cli as cli_package
from decode_ring.cli import main
from decode_ring.cli.launch import CLASSES, grammar, read_launch
from decode_ring.cli.parsing import UsageError
from decode_ring.cli.servers import SGLANG_COMMAND, VLLM_COMMAND
from decode_ring.releases import SGLANG, SGLANG_RELEASES, VLLM, VLLM_RELEASES, resolve_release

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = ROOT / "tests" / "configs"
# The tables as installed (the wheel matrix runs these tests beside a wheel, with no source tree).
INSTALLED_CLI = Path(cli_package.__file__).resolve().parent
FLAGS = INSTALLED_CLI / "flags"
CLASS_TABLES = INSTALLED_CLI / "flag_classes"
QWEN3_NEXT = str(CONFIGS / "qwen3-next-80b-a3b-instruct.json")
NEMOTRON = str(CONFIGS / "nemotron-nano-9b-v2.json")
SERVERS = {"vllm": (VLLM, VLLM_COMMAND), "sglang": (SGLANG, SGLANG_COMMAND)}
# The flags that name the model and read a YAML of flags: modelled, with no row of their own.
MODEL_FLAGS = {"vllm": {"--model", "--config"}, "sglang": {"--model-path", "--config"}}


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def answer(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    status, out, err = run(capsys, argv[0], "--json", *argv[1:])
    assert (status, err) == (0, ""), err
    result: dict[str, Any] = json.loads(out)
    return result


def refusal(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    status, out, err = run(capsys, *argv)
    assert status == 2, err
    assert out == "" or json.loads(out)["status"] == 2  # main sees a --json word anywhere
    assert err.startswith("decode-ring: error: ") and err.count("\n") == 1
    return err[len("decode-ring: error: ") : -1]


# --- the class table ---------------------------------------------------------------------------


@pytest.mark.parametrize("server", ["vllm", "sglang"])
def test_the_class_table_covers_the_generated_flags_exactly(server: str) -> None:
    release, _ = SERVERS[server]
    name = f"{server}-{release.version}.json"
    generated = [entry["flag"] for entry in json.loads((FLAGS / name).read_text())["flags"]]
    table = json.loads((CLASS_TABLES / name).read_text())
    assert (table["server"], table["version"]) == (server, release.version)
    assert sorted(table["classes"]) == sorted(generated)
    for flag, (klass, reason) in table["classes"].items():
        assert klass in CLASSES, flag
        assert reason and "\n" not in reason and len(reason) <= 160, flag


@pytest.mark.parametrize("server", ["vllm", "sglang"])
def test_a_row_reads_a_list_exactly_where_each_releases_parser_gives_one(server: str) -> None:
    # argparse gives a list for nargs "+" (even "--flag=VALUE": a list of one) and one string
    # otherwise; the command reads a row's value as a list exactly for its list rows.
    newest, command = SERVERS[server]
    rows = {name: spec for spec in command.server_rows for name in (spec.flag, *spec.aliases)}
    releases = VLLM_RELEASES if server == "vllm" else SGLANG_RELEASES
    checked = set()
    for version in releases:
        flags = grammar(newest, resolve_release(server, version).release)
        for entry in flags.entries:
            spec = rows.get(entry.reads_as or entry.flag)
            if spec is not None and entry.takes_value:
                assert (entry.nargs == "+") == spec.many, (version, entry.flag)
                checked.add(spec.flag)
    assert checked == {spec.flag for spec in command.server_rows if spec.switch is None}


@pytest.mark.parametrize("server", ["vllm", "sglang"])
def test_the_modelled_flags_are_the_flags_the_command_reads(server: str) -> None:
    release, command = SERVERS[server]
    modelled = {entry.flag for entry in grammar(release).entries if entry.klass == "modelled"}
    rows = {spec.flag for spec in command.server_rows}
    assert modelled == rows | MODEL_FLAGS[server]


def test_front_end_flags_have_no_effect_on_memory() -> None:
    # Every flag of vLLM's and SGLang's front end (the API server's, cli_args.py) is accepted:
    # none changes the engine's memory, but --config, which reads a YAML of flags.
    for server in ("vllm", "sglang"):
        release, _ = SERVERS[server]
        for entry in grammar(release).entries:
            if entry.group == "frontend" and entry.flag != "--config":
                assert entry.klass == "no_effect", entry.flag


@pytest.mark.parametrize("server", ["vllm", "sglang"])
def test_every_front_end_flag_is_accepted_and_listed(
    capsys: pytest.CaptureFixture[str], server: str
) -> None:
    release, _ = SERVERS[server]
    line: list[str] = []
    flags = []
    for entry in grammar(release).entries:
        if entry.group != "frontend" or entry.flag in ("--config", "--help"):
            continue
        flags.append(entry.flag)
        line.append(entry.flag)
        if entry.takes_value:
            line.append("1")
    model = ["serve", QWEN3_NEXT] if server == "vllm" else ["--model-path", NEMOTRON]
    budget = ["--available-memory", "60GiB"] if server == "sglang" else []
    result = answer(capsys, server, *budget, *model, *line)
    assert sorted(result["launch"]["no_effect"]) == sorted(flags)


# --- the forms of the line ---------------------------------------------------------------------


def test_vllm_serve_takes_the_positional_model_and_any_serve_flag(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The Qwen3-Next recipe (docs.vllm.ai/projects/recipes/en/latest/Qwen/Qwen3-Next.html):
    # vllm serve Qwen/Qwen3-Next-80B-A3B-Instruct --tensor-parallel-size 4
    #   --served-model-name qwen3-next --enable-prefix-caching
    result = answer(
        capsys,
        "vllm",
        "serve",
        QWEN3_NEXT,
        "--tensor-parallel-size",
        "4",
        "--served-model-name",
        "qwen3-next",
        "--enable-prefix-caching",
    )
    assert result["tensor_parallel_size"] == 4 and result["enable_prefix_caching"] is True
    assert result["launch"] == {
        "model": QWEN3_NEXT,
        "no_effect": ["--served-model-name"],
        "ignored_unmodelled": [],
        "repeated": [],
        "warnings": [],
    }


def test_vllm_moves_model_to_the_positional_and_refuses_both(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # argparse_utils.py:324-356: with serve, --model X becomes the positional model.
    moved = answer(capsys, "vllm", "serve", "-tp", "2", "--model", QWEN3_NEXT)
    assert (moved["tensor_parallel_size"], moved["source"]) == (2, QWEN3_NEXT)
    both = refusal(capsys, "vllm", "serve", QWEN3_NEXT, "--model", NEMOTRON)
    assert both.startswith("vLLM 0.33.0: the model is given twice")


def test_the_api_server_command_after_two_dashes(capsys: pytest.CaptureFixture[str]) -> None:
    # The GLM-5.2 NVFP4 launch (LAUNCH_LINES.md 12) shape: python3 -m
    # vllm.entrypoints.openai.api_server --model M --tensor-parallel-size 4 ... --port 8972.
    result = answer(
        capsys,
        "vllm",
        "--",
        "python3",
        "-m",
        "vllm.entrypoints.openai.api_server",
        "--model",
        QWEN3_NEXT,
        "--tensor-parallel-size",
        "4",
        "--trust-remote-code",
        "--disable-log-stats",
        "--port",
        "8972",
        "--host",
        "127.0.0.1",
        "--reasoning-parser",
        "glm45",
    )
    assert result["tensor_parallel_size"] == 4
    assert result["launch"]["no_effect"] == [
        "--trust-remote-code",
        "--disable-log-stats",
        "--port",
        "--host",
        "--reasoning-parser",
    ]
    dashed = answer(capsys, "vllm", "--", "vllm", "serve", QWEN3_NEXT, "-tp", "2")
    assert dashed["tensor_parallel_size"] == 2
    wrong = refusal(capsys, "vllm", "--", "python", "-m", "sglang.launch_server")
    assert wrong.startswith("after --, give the vLLM command: python -m vllm.entrypoints")


def test_sglang_lines_with_and_without_the_command(capsys: pytest.CaptureFixture[str]) -> None:
    # SGLang's Qwen3-Next page (docs.sglang.io/basic_usage/qwen3.html): python3 -m
    # sglang.launch_server --model Qwen/Qwen3-Next-80B-A3B-Instruct --tp 4. --model is an alias
    # of --model-path; --tp works as an abbreviation of --tp-size (allow_abbrev).
    budget = ("--available-memory", "60GiB")
    pasted = answer(
        capsys, "sglang", *budget, "--", "python3", "-m", "sglang.launch_server", "--model",
        QWEN3_NEXT, "--tp", "4",
    )  # fmt: skip
    direct = answer(capsys, "sglang", *budget, "--model-path", QWEN3_NEXT, "--tp", "4")
    assert pasted["tp_size"] == direct["tp_size"] == 4
    assert pasted["slots"] == direct["slots"]
    served = answer(capsys, "sglang", *budget, "--", "sglang", "serve", "--model-path", NEMOTRON)
    assert served["source"] == NEMOTRON


def test_package_flags_come_before_the_line(capsys: pytest.CaptureFixture[str]) -> None:
    # After serve, --json is no flag of vLLM's.
    late = refusal(capsys, "vllm", "serve", QWEN3_NEXT, "--json")
    assert late == (
        "'--json' is not a vLLM 0.33.0 flag (it is decode-ring's own: give it before the launch "
        "line)"
    )
    # The earlier form, the model by the package's --config, keeps its flags anywhere.
    early = answer(
        capsys, "vllm", "--config", QWEN3_NEXT, "--max-num-seqs", "8", "--gpu-arch", "sm89"
    )
    assert (early["max_num_seqs"], early["gpu_arch"]) == (8, "sm89")
    twice = refusal(capsys, "vllm", "--config", NEMOTRON, "serve", QWEN3_NEXT)
    assert twice.startswith("the model is given twice: --config")
    assert refusal(capsys, "sglang", "--tp", "2").startswith(
        "no model: give the launch line's --model-path MODEL"
    )


def test_the_earlier_forms_package_flags_are_read_anywhere_in_the_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # Among the server's flags: --config=PATH (a path holding "=" kept whole; the next word is
    # the server's), the switch --json (it takes no value), --gpu-arch SM.
    folder = tmp_path / "a=b"
    folder.mkdir()
    config = folder / "config.json"
    config.write_text(Path(NEMOTRON).read_text())
    status, out, err = run(
        capsys,
        "vllm",
        "--max-num-seqs",
        "8",
        f"--config={config}",
        "--max-model-len",
        "4096",
        "--json",
        "--gpu-arch",
        "sm89",
    )
    assert (status, err) == (0, "")
    result = json.loads(out)
    assert result["source"] == str(config)
    assert (result["max_num_seqs"], result["max_model_len"], result["gpu_arch"]) == (
        8,
        4096,
        "sm89",
    )
    # A package flag that takes a value, last on the line and without one.
    assert refusal(capsys, "vllm", "--max-num-seqs", "8", "--config") == (
        "argument --config: expected one argument"
    )
    assert refusal(capsys, "vllm", "--config") == "argument --config: expected one argument"


def test_the_packages_leading_flags_take_the_equals_form_and_help(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    folder = tmp_path / "a=b"
    folder.mkdir()
    config = folder / "config.json"
    config.write_text(Path(NEMOTRON).read_text())
    result = answer(capsys, "vllm", f"--config={config}", "--max-num-seqs", "8")
    assert (result["source"], result["max_num_seqs"]) == (str(config), 8)
    result = answer(capsys, "vllm", "--gpu-arch", "sm89", "--config", str(config), "-tp", "1")
    assert (result["gpu_arch"], result["source"]) == ("sm89", str(config))
    # Before the server's whole line, the package's --config=PATH leads, cut at its first "=".
    line = ("--", "vllm", "serve", "--max-num-seqs", "8")
    result = answer(capsys, "vllm", f"--config={config}", *line)
    assert (result["source"], result["max_num_seqs"]) == (str(config), 8)
    # Before serve, the package's --flag=VALUE leads too.
    result = answer(capsys, "vllm", "--gpu-arch=sm89", "serve", QWEN3_NEXT)
    assert (result["gpu_arch"], result["source"]) == ("sm89", QWEN3_NEXT)
    for spelling in ("-h", "--help"):
        status, out, err = run(capsys, "vllm", spelling)
        assert (status, err) == (0, "")
        assert out.startswith("usage: decode-ring vllm [-h] [--config MODEL]")


def test_every_flag_the_release_lacks_is_named_in_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert refusal(
        capsys,
        "vllm",
        "--vllm-version",
        "0.10.2",
        "--config",
        NEMOTRON,
        "--use-replayssm",
        "--replayssm-buffer-len",
        "4",
        "--max-cudagraph-capture-size",
        "8",
        "--monokernel",
    ) == (
        "vLLM 0.10.2 has no such flag: --use-replayssm (in 0.27.0-0.33.0); --replayssm-buffer-len "
        "(in 0.27.0-0.33.0); --max-cudagraph-capture-size (in 0.11.1-0.33.0); --monokernel (in "
        "0.33.0)"
    )


def test_a_spelling_the_release_lacks_is_refused_though_its_flag_is_there(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # vLLM 0.19.1 has --enable-log-requests but not --disable-log-requests, which 0.10.2 to
    # 0.16.0 registered and 0.33.0's EnableDisableAction makes again (the generated flag lists);
    # SGLang 0.5.10 has --hisparse-config but not its other name, which 0.5.8-0.5.9 and 0.5.12
    # on have. Each is named as written, with every range of releases that has it.
    line = ("--vllm-version", "0.19.1", "serve", QWEN3_NEXT, "--disable-log-requests")
    assert refusal(capsys, "vllm", *line) == (
        "vLLM 0.19.1 has no such flag: --disable-log-requests (in 0.10.2-0.16.0, 0.33.0)"
    )
    assert answer(capsys, "vllm", *line[:-1], "--no-enable-log-requests")["launch"][
        "no_effect"
    ] == ["--enable-log-requests"]
    hisparse = "--hierarchical-sparse-attention-extra-config"
    sglang = ("--sglang-version", "0.5.10", "--available-memory", "60GiB", "--model-path", NEMOTRON)
    assert refusal(capsys, "sglang", *sglang, hisparse, "{}") == (
        f"SGLang 0.5.10 has no such flag: {hisparse} (in 0.5.8-0.5.9, 0.5.12-0.5.23)"
    )


def quoted(text: str) -> str:
    """How a refusal quotes a value: whole up to 40 characters, else its first 40 and length."""
    return ascii(text) if len(text) <= 40 else f"{text[:40]!a}... ({len(text)} characters)"


def test_a_line_naming_its_model_keeps_the_packages_flags_in_front(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # --model=PATH names the line's model (a path holding "=" read whole), so the package's
    # flags must lead: --gpu-arch after it is refused as decode-ring's own.
    folder = tmp_path / "a=b"
    folder.mkdir()
    config = folder / "config.json"
    config.write_text(Path(QWEN3_NEXT).read_text())
    assert refusal(
        capsys, "vllm", f"--model={config}", "--max-num-seqs", "8", "--gpu-arch", "sm89"
    ) == (
        "'--gpu-arch' is not a vLLM 0.33.0 flag (it is decode-ring's own: give it before the "
        "launch line)"
    )
    # So does a model flag after a word the server cannot read (--ma: a prefix of several):
    # the line is the server's from its first word, and its first flag it lacks is refused.
    assert refusal(
        capsys,
        "vllm",
        "--max-num-seqs",
        "8",
        "--gpu-arch",
        "sm89",
        "--ma",
        "1",
        "--model",
        QWEN3_NEXT,
    ).startswith("'--gpu-arch' is not a vLLM 0.33.0 flag")
    # Without serve the line is the api_server's, whose parser takes a positional model_tag but
    # never reads it (vllm/entrypoints/launchers/api_server/entry.py:218-226 serves args.model),
    # so the word is refused rather than silently dropped; with serve the word is the model.
    assert refusal(capsys, "vllm", "--model", QWEN3_NEXT, "extra") == (
        "vLLM 0.33.0: unexpected argument 'extra' (this entry point reads the model from --model)"
    )
    assert refusal(capsys, "vllm", "serve", "--model", QWEN3_NEXT, "extra").startswith(
        "vLLM 0.33.0: the model is given twice, 'extra' and --model"
    )
    assert refusal(capsys, "vllm", "--config", NEMOTRON, "serve", QWEN3_NEXT) == (
        f"the model is given twice: --config {quoted(NEMOTRON)} and the launch line's "
        f"{quoted(QWEN3_NEXT)}; give one"
    )


# --- reading the flags as the servers do -------------------------------------------------------


def test_a_repeated_server_flag_takes_the_last_value(capsys: pytest.CaptureFixture[str]) -> None:
    # argparse stores each occurrence; the last wins. vLLM warns of exact repeats
    # ("Found duplicate keys", argparse_utils.py:445-495); --max_num_seqs is rewritten first.
    result = answer(
        capsys, "vllm", "serve", QWEN3_NEXT, "--max_num_seqs", "8", "--max-num-seqs", "16"
    )
    assert result["max_num_seqs"] == 16
    assert result["launch"]["repeated"] == ["--max-num-seqs"]
    assert result["launch"]["warnings"] == ["Found duplicate keys --max-num-seqs"]
    # Two spellings of one flag are not an exact repeat: no warning, the last still wins.
    spelled = answer(capsys, "vllm", "serve", QWEN3_NEXT, "-tp", "2", "--tensor-parallel-size", "4")
    assert spelled["tensor_parallel_size"] == 4 and spelled["launch"]["warnings"] == []
    sglang = answer(
        capsys, "sglang", "--available-memory", "60GiB", "--model-path", NEMOTRON,
        "--max-running-requests", "8", "--max-running-requests", "16",
    )  # fmt: skip
    assert sglang["launch"]["repeated"] == ["--max-running-requests"]
    assert sglang["max_running_requests"] == 16


def test_the_package_flags_still_refuse_a_second_value(capsys: pytest.CaptureFixture[str]) -> None:
    line = refusal(capsys, "vllm", "--gpu-arch", "sm89", "--gpu-arch", "sm90", "serve", QWEN3_NEXT)
    assert line == "argument --gpu-arch: given twice, with different values"


def test_dotted_json_keys_merge_into_one_value(capsys: pytest.CaptureFixture[str]) -> None:
    # argparse_utils.py:421-500: --speculative-config.num_speculative_tokens 2 is one key of
    # one JSON value, placed last.
    result = answer(
        capsys,
        "vllm",
        "serve",
        QWEN3_NEXT,
        "--no-enable-prefix-caching",
        "--speculative-config.method",
        "mtp",
        "--speculative_config.num_speculative_tokens",
        "2",
    )
    assert result["num_speculative_tokens"] == 2 and result["block_size"] == 560


def test_vllm_reads_prefixes_and_underscores_sglang_reads_prefixes_only(
    capsys: pytest.CaptureFixture[str],
) -> None:
    vllm = grammar(VLLM)
    line = read_launch(vllm, ["M", "--max-num-se", "8", "--tensor_parallel_size=2"], serve=True)
    assert [(one.entry.flag, one.value) for one in line.given] == [
        ("--max-num-seqs", "8"),
        ("--tensor-parallel-size", "2"),
    ]
    sglang = grammar(SGLANG)
    line = read_launch(sglang, ["--model-path", "M", "--tp", "2", "--context-len", "4096"])
    assert [one.entry.flag for one in line.given] == [
        "--model-path",
        "--tp-size",
        "--context-length",
    ]
    under = refusal(capsys, "sglang", "--model-path", NEMOTRON, "--tp_size", "2")
    assert under == (
        "'--tp_size' is not a SGLang 0.5.23 flag (SGLang spells it --tp-size: it reads no "
        "underscores)"
    )


def test_a_flag_with_its_json_value_attached_is_the_flag_though_the_value_has_spaces(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # argparse's _parse_optional finds the flag before an "=" ahead of its rule that a word
    # with a space is a value: vLLM reads --speculative-config={"num_speculative_tokens": 2}.
    result = answer(
        capsys,
        "vllm",
        "serve",
        QWEN3_NEXT,
        "--no-enable-prefix-caching",
        '--speculative-config={"num_speculative_tokens": 2}',
    )
    assert result["num_speculative_tokens"] == 2 and result["block_size"] == 560


def test_unmodelled_flags_are_refused_together_or_ignored_and_named(
    capsys: pytest.CaptureFixture[str],
) -> None:
    line = (
        "serve",
        QWEN3_NEXT,
        "--enable-lora",
        "--attention-backend",
        "FLASHINFER",
        "--port",
        "1",
    )
    refused = refusal(capsys, "vllm", *line)
    assert refused.startswith(
        "vLLM 0.33.0 flags that change memory in a way decode-ring vllm does not model: "
        "--enable-lora ("
    )
    assert "; --attention-backend (" in refused
    assert refused.endswith("drop them, or pass --allow-unmodelled to answer without them")
    allowed = answer(capsys, "vllm", "--allow-unmodelled", *line)
    assert allowed["launch"]["ignored_unmodelled"] == ["--enable-lora", "--attention-backend"]
    assert allowed["launch"]["no_effect"] == ["--port"]
    status, out, _ = run(capsys, "vllm", "--allow-unmodelled", *line)
    assert status == 0
    assert "  ignored, not modelled  --enable-lora, --attention-backend (--allow-unmodelled)" in out


def test_a_flag_at_the_servers_default_changes_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    # Chunked prefill is on for a generative model; --enable-chunked-prefill says so again.
    on = answer(capsys, "vllm", "serve", QWEN3_NEXT, "--enable-chunked-prefill")
    assert on["launch"]["no_effect"] == ["--enable-chunked-prefill"]
    off = refusal(capsys, "vllm", "serve", QWEN3_NEXT, "--no-enable-chunked-prefill")
    assert "does not model: --enable-chunked-prefill" in off


def test_a_yaml_config_is_read_as_each_server_reads_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    pytest.importorskip("yaml")
    # vLLM: the file's flags after the model, so the line's own win (argparse_utils.py:
    # 516-604); a nested mapping becomes a JSON value, false a --no- flag (:606-673).
    config = tmp_path / "serve.yaml"
    config.write_text(
        "tensor-parallel-size: 4\nmax_num_seqs: 8\nenable-prefix-caching: false\n"
        "speculative-config:\n  num_speculative_tokens: 2\nport: 8000\n"
    )
    result = answer(capsys, "vllm", "serve", QWEN3_NEXT, "--config", str(config), "-tp", "2")
    assert (result["tensor_parallel_size"], result["max_num_seqs"]) == (2, 8)
    assert result["enable_prefix_caching"] is False and result["num_speculative_tokens"] == 2
    assert result["launch"]["no_effect"] == ["--port"]
    # SGLang: the file first (server_args_config_parser.py:75-106); the line's flags win.
    sglang = tmp_path / "launch.yml"
    sglang.write_text(f"model-path: {NEMOTRON}\ntp-size: 2\nmax-running-requests: 8\n")
    pool = answer(
        capsys, "sglang", "--available-memory", "60GiB", "--config", str(sglang),
        "--max-running-requests", "4",
    )  # fmt: skip
    assert (pool["tp_size"], pool["max_running_requests"]) == (2, 4)
    json_file = tmp_path / "serve.json"
    json_file.write_text("{}")
    assert refusal(capsys, "vllm", "serve", QWEN3_NEXT, "--config", str(json_file)).endswith(
        ": vLLM reads only .yaml or .yml, in lower case"
    )


def test_a_yaml_config_without_serve_starts_the_servers_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("yaml")
    # --config FILE.yaml (or .YAML) is the server's file of flags, naming the model, not the
    # package's --config MODEL (a model is never YAML).
    budget = ("--available-memory", "60GiB")  # SGLang's command needs one
    for server, model, *flags in (("vllm", "model"), ("sglang", "model-path", *budget)):
        config = tmp_path / f"{server}.yaml"
        config.write_text(f"{model}: {QWEN3_NEXT}\n")
        assert answer(capsys, server, *flags, "--config", str(config))["source"] == QWEN3_NEXT
    # SGLang takes the suffix in any case; vLLM only in lower case (argparse_utils.py:633-637:
    # "Config file must be of a yaml/yml type. YAML supplied").
    upper = tmp_path / "SERVE.YAML"
    upper.write_text(f"model-path: {NEMOTRON}\nmax-running-requests: 8\n")
    result = answer(capsys, "sglang", *budget, "--config", str(upper))
    assert (result["source"], result["max_running_requests"]) == (NEMOTRON, 8)
    monkeypatch.chdir(tmp_path)
    assert refusal(capsys, "vllm", "--config", "SERVE.YAML") == (
        "--config 'SERVE.YAML': vLLM reads only .yaml or .yml, in lower case"
    )
    # .yml as written is vLLM's too, .YML not.
    Path("serve.yml").write_text(f"model: {QWEN3_NEXT}\n")
    assert answer(capsys, "vllm", "--config", "serve.yml")["source"] == QWEN3_NEXT
    Path("serve.YML").write_text(f"model: {QWEN3_NEXT}\n")
    assert refusal(capsys, "vllm", "--config", "serve.YML") == (
        "--config 'serve.YML': vLLM reads only .yaml or .yml, in lower case"
    )


@pytest.mark.parametrize(
    ("server", "line", "cited"),
    [
        ("vllm", ("serve", QWEN3_NEXT), "vLLM reads a file of flags only from the word --config "
         "and the file after it (vllm/utils/argparse_utils.py:371-372)"),
        ("sglang", ("--available-memory", "60GiB", "--model-path", NEMOTRON), "SGLang reads a "
         "file of flags only from the word --config and the file after it (sglang/srt/"
         "server_args.py:683-689)"),
    ],
)  # fmt: skip
def test_a_yaml_config_given_with_equals_is_named_as_not_read(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, server: str, line: tuple[str, ...],
    cited: str,
) -> None:  # fmt: skip
    # Both servers expand a file of flags only where the line holds the word --config
    # (vLLM: `if "--config" in args`, argparse_utils.py:371; SGLang: `if "--config" in argv`,
    # server_args.py:683): --config=FILE is stored by argparse and its flags never apply.
    # The package answers as the server boots (tp 1, not the file's 2) and says so.
    # In a folder whose name holds "=": the word is cut at its first "=" only.
    (tmp_path / "a=b").mkdir()
    flags = tmp_path / "a=b" / "flags.YML"
    flags.write_text("tensor-parallel-size: 2\ntp-size: 2\n")
    unread = f"'--config={flags}' is not read: {cited}, so its flags do not apply"
    result = answer(capsys, server, *line, f"--config={flags}")
    assert result.get("tensor_parallel_size", result.get("tp_size")) == 1
    assert unread in result["assumptions"]
    # With the model only inside the file, there is no model, and the refusal says why.
    model = tmp_path / "a=b" / "model.yaml"
    model.write_text(f"model: {QWEN3_NEXT}\nmodel-path: {NEMOTRON}\n")
    where = "serve MODEL" if server == "vllm" else "--model-path MODEL"
    assert refusal(capsys, server, f"--config={model}") == (
        f"no model: give the launch line's {where} (or --config MODEL before it); "
        f"'--config={model}' is not read: {cited}, so its flags do not apply"
    )
    # Each file not read is named, in the order given.
    assert refusal(capsys, server, f"--config={model}", f"--config={flags}") == (
        f"no model: give the launch line's {where} (or --config MODEL before it); "
        f"'--config={model}' is not read: {cited}, so its flags do not apply; "
        f"'--config={flags}' is not read: {cited}, so its flags do not apply"
    )


def test_a_bad_value_names_the_flag_as_written(capsys: pytest.CaptureFixture[str]) -> None:
    assert refusal(capsys, "vllm", "serve", QWEN3_NEXT, "--max_num_seqs", "x") == (
        "argument --max-num-seqs: not a non-negative integer: 'x'"
    )
    assert refusal(capsys, "vllm", "serve", QWEN3_NEXT, "--max-num-seqs") == (
        "argument '--max-num-seqs': expected one argument"
    )


@pytest.mark.parametrize("server", ["vllm", "sglang", "plan"])
def test_help_ends_with_worked_examples_and_names_the_modelled_flags(
    capsys: pytest.CaptureFixture[str], server: str
) -> None:
    assert main([server, "--help"]) == 0
    text = capsys.readouterr().out
    examples = text[text.index("\nexamples:\n") :]
    assert examples.count("\n  decode-ring ") in (2, 3)
    if server == "plan":
        return
    release, command = SERVERS[server]
    modelled = " ".join(text[text.index(f"modelled {release.server} flags:") :].split())
    for spec in command.server_rows:
        assert spec.flag in modelled, spec.flag
    assert "--gpu" in examples and ("serve" in examples or "--model" in examples)


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (
            ["vllm", "serve", "tests/configs/nemotron-nano-9b-v2.json", "--vllm-version", "0.19.1"],
            "--vllm-version",
        ),
        (
            [
                "sglang",
                "--model-path",
                "tests/configs/nemotron-nano-9b-v2.json",
                "--gpu-arch",
                "sm90",
            ],
            "--gpu-arch",
        ),
    ],
)
def test_the_packages_own_flag_inside_the_launch_line_says_where_it_goes(
    capsys: pytest.CaptureFixture[str], argv: list[str], flag: str
) -> None:
    status, out, err = run(capsys, *argv)
    assert (status, out) == (2, "")
    assert err.endswith(
        f"{flag!r} is not a {'vLLM 0.33.0' if argv[0] == 'vllm' else 'SGLang 0.5.23'} flag "
        "(it is decode-ring's own: give it before the launch line)\n"
    )


# --- a line written for an older release -------------------------------------------------------

# The tables as installed, beside the per-release flag lists they class.
OLDER_CLASSES = {
    server: json.loads((INSTALLED_CLI / "flag_classes" / f"{server}-older.json").read_text())
    for server in ("vllm", "sglang")
}
RELEASE_LISTS = {
    server: json.loads((FLAGS / f"{server}-releases.json").read_text())
    for server in ("vllm", "sglang")
}


def test_an_older_releases_flag_is_read_with_its_own_arity(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # vllm-0.13.0:vllm/engine/arg_utils.py:892 registers --swap-space (a float, host memory
    # for preempted sequences); 0.18.0 dropped it (no "--swap-space" in its arg_utils.py).
    line = ("serve", QWEN3_NEXT, "--swap-space", "4", "--kv-cache-memory-bytes", "20G")
    old = answer(capsys, "vllm", "--vllm-version", "0.13.0", *line)
    assert old["server_version"] == "0.13.0"
    assert old["launch"]["no_effect"] == ["--swap-space"]
    assert old["kv_cache_memory_bytes"] == 20 * 2**30  # vLLM reads an upper-case G as GiB
    assert refusal(capsys, "vllm", *line) == "'--swap-space' is not a vLLM 0.33.0 flag"
    assert (
        refusal(capsys, "vllm", "--vllm-version", "0.19.1", *line)
        == "'--swap-space' is not a vLLM 0.19.1 flag"
    )


def test_an_older_spelling_of_a_modelled_flag_is_read_as_the_new_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # sglang-0.5.13:sglang/srt/server_args.py:6225 registers --mamba-scheduler-strategy; 0.5.19
    # keeps it as a deprecated alias storing mamba_radix_cache_strategy (server_args.py:3920-3927).
    line = ("--available-memory", "40GiB", "--model-path", QWEN3_NEXT)
    old = answer(
        capsys, "sglang", "--sglang-version", "0.5.13", *line, "--mamba-scheduler-strategy", "auto"
    )
    assert (old["server_version"], old["mamba_radix_cache_strategy"]) == ("0.5.13", "no_buffer")
    alias = answer(
        capsys,
        "sglang",
        "--sglang-version",
        "0.5.19",
        *line,
        "--disable-overlap-schedule",
        "--mamba-scheduler-strategy",
        "extra_buffer",
    )
    assert (alias["mamba_radix_cache_strategy"], alias["ratio"]) == ("extra_buffer", 4)
    assert refusal(capsys, "sglang", *line, "--mamba-scheduler-strategy", "extra_buffer") == (
        "'--mamba-scheduler-strategy' is not a SGLang 0.5.23 flag"
    )


def test_an_older_flag_not_classed_is_refused_as_unmodelled_or_ignored(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # vLLM 0.10.2 to 0.27.1 register --override-attention-dtype (vllm-0.13.0:vllm/engine/
    # arg_utils.py:691): classed unmodelled, as it changes the KV page.
    line = (
        "serve",
        QWEN3_NEXT,
        "--override-attention-dtype",
        "float16",
        "--kv-cache-memory-bytes",
        "20G",
    )
    refused = refusal(capsys, "vllm", "--vllm-version", "0.13.0", *line)
    assert refused == (
        "vLLM 0.13.0 flags that change memory in a way decode-ring vllm does not model: "
        "--override-attention-dtype (the attention dtype (KV page bytes)); drop it, or pass "
        "--allow-unmodelled to answer without it"
    )
    allowed = answer(capsys, "vllm", "--vllm-version", "0.13.0", "--allow-unmodelled", *line)
    assert allowed["launch"]["ignored_unmodelled"] == ["--override-attention-dtype"]


@pytest.mark.parametrize("server", ["vllm", "sglang"])
def test_the_older_class_tables_class_only_flags_the_newest_release_dropped(server: str) -> None:
    release = VLLM if server == "vllm" else SGLANG
    older = RELEASE_LISTS[server]["older"]
    newest = grammar(release)
    named = {shape["flag"] for spans in older.values() for *_, shape in spans} | set(older)
    classes = OLDER_CLASSES[server]["classes"]
    for flag, (klass, reason, *reads_as) in classes.items():
        assert flag in named and flag not in newest.spellings, flag
        assert klass in CLASSES and reason and len(reason) <= 160, flag
        if reads_as:
            assert klass == "modelled", flag
            (current,) = reads_as
            rows = VLLM_COMMAND.server_rows if server == "vllm" else SGLANG_COMMAND.server_rows
            assert current in {spec.flag for spec in rows}, flag
    releases = RELEASE_LISTS[server]["releases"]
    for spelling, spans in older.items():
        assert spelling not in newest.spellings, spelling
        for first, last, shape in spans:
            assert releases.index(first) <= releases.index(last), spelling
            assert set(shape) == {"flag", "dest", "takes_value", "negatable", "nargs", "default"}


def test_an_older_flag_is_parsed_as_its_own_release_parses_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # --guided-decoding-disable-fallback is a switch in vLLM 0.10.2 (vllm-0.10.2:
    # vllm/engine/arg_utils.py:410, :618, a bool field's BooleanOptionalAction) and takes a value
    # in 0.11.0 (vllm-0.11.0:vllm/engine/arg_utils.py:430, :633, ("...", bool): an Optional
    # value); 0.33.0 has neither. Each release's line reads it as that release does.
    spans = RELEASE_LISTS["vllm"]["older"]["--guided-decoding-disable-fallback"]
    assert [(first, last, shape["takes_value"]) for first, last, shape in spans] == [
        ("0.10.2", "0.10.2", False),
        ("0.11.0", "0.11.2", True),
    ]
    line = ("serve", QWEN3_NEXT, "--kv-cache-memory-bytes", "20G")
    switch = answer(
        capsys, "vllm", "--vllm-version", "0.10.2", *line, "--guided-decoding-disable-fallback"
    )
    assert switch["launch"]["no_effect"] == ["--guided-decoding-disable-fallback"]
    valued = answer(
        capsys,
        "vllm",
        "--vllm-version",
        "0.11.0",
        *line,
        "--guided-decoding-disable-fallback",
        "true",
    )
    assert valued["launch"]["no_effect"] == ["--guided-decoding-disable-fallback"]
    missing = refusal(
        capsys, "vllm", "--vllm-version", "0.11.0", *line, "--guided-decoding-disable-fallback"
    )
    assert missing == "argument '--guided-decoding-disable-fallback': expected one argument"


def test_an_unmodelled_flag_at_the_servers_own_default_changes_nothing(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # vllm-0.33.0:vllm/config/parallel.py:147: data_parallel_size defaults to 1, the parser's
    # default (flags/vllm-0.33.0.json); the class table has no effective default of its own.
    line = ("serve", QWEN3_NEXT, "--kv-cache-memory-bytes", "20G")
    one = answer(capsys, "vllm", *line, "--data-parallel-size", "1")
    assert one["launch"]["no_effect"] == ["--data-parallel-size"]
    assert refusal(capsys, "vllm", *line, "--data-parallel-size", "2") == (
        "vLLM 0.33.0 flags that change memory in a way decode-ring vllm does not model: "
        "--data-parallel-size (replicated engines; with MoE+EP changes expert sharding and adds "
        "all2all buffers); drop it, or pass --allow-unmodelled to answer without it"
    )


def test_older_flags_keep_their_own_places_in_the_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # vLLM 0.13.0 has --swap-space (to 0.17.1) and --max-num-partial-prefills (to 0.26.0), both
    # dropped by 0.33.0 (flags/vllm-releases.json "older"): two flags, each listed, neither
    # given twice.
    line = ("serve", QWEN3_NEXT, "--kv-cache-memory-bytes", "20G")
    both = answer(
        capsys,
        "vllm",
        "--vllm-version",
        "0.13.0",
        *line,
        "--swap-space",
        "4",
        "--max-num-partial-prefills",
        "2",
    )
    assert (both["launch"]["no_effect"], both["launch"]["repeated"]) == (
        ["--swap-space", "--max-num-partial-prefills"],
        [],
    )
    # vLLM 0.11.0's --cuda-graph-sizes takes one or more values (nargs "+"), as its parser does.
    sizes = answer(
        capsys,
        "vllm",
        "--vllm-version",
        "0.11.0",
        "--allow-unmodelled",
        *line,
        "--cuda-graph-sizes",
        "1",
        "2",
        "4",
    )
    assert sizes["launch"]["ignored_unmodelled"] == ["--cuda-graph-sizes"]


def test_a_negated_older_flag_reads_as_its_flag_or_as_a_switch_of_its_own(
    capsys: pytest.CaptureFixture[str],
) -> None:
    line = ("serve", QWEN3_NEXT, "--kv-cache-memory-bytes", "20G")
    # vLLM 0.11.0's --enable-lora-bias is negatable (vllm-0.11.0:vllm/engine/arg_utils.py:399, a
    # bool field, given BooleanOptionalAction at :208):
    # --no-enable-lora-bias gives its default, False, so it changes nothing; the flag itself is
    # classed unmodelled (flag_classes/vllm-older.json).
    off = answer(capsys, "vllm", "--vllm-version", "0.11.0", *line, "--no-enable-lora-bias")
    assert off["launch"]["no_effect"] == ["--enable-lora-bias"]
    assert refusal(capsys, "vllm", "--vllm-version", "0.11.0", *line, "--enable-lora-bias") == (
        "vLLM 0.11.0 flags that change memory in a way decode-ring vllm does not model: "
        "--enable-lora-bias (LoRA weight slots); drop it, or pass --allow-unmodelled to answer "
        "without it"
    )
    kv_scales = answer(
        capsys, "vllm", "--vllm-version", "0.13.0", *line, "--no-calculate-kv-scales"
    )
    assert kv_scales["launch"]["no_effect"] == ["--calculate-kv-scales"]
    # 0.33.0 keeps --disable-log-requests (an alias of --enable-log-requests) but not its
    # negation, which vLLM 0.13.0 has: a switch of its own, taking no value.
    negation = answer(
        capsys,
        "vllm",
        "--vllm-version",
        "0.13.0",
        "serve",
        QWEN3_NEXT,
        "--no-disable-log-requests",
        "--kv-cache-memory-bytes",
        "20G",
    )
    assert negation["launch"]["no_effect"] == ["--no-disable-log-requests"]
    # A switch takes no value, as argparse refuses one given with "=" (nargs 0).
    assert refusal(
        capsys,
        "vllm",
        "--vllm-version",
        "0.13.0",
        "serve",
        QWEN3_NEXT,
        "--no-disable-log-requests=1",
        "--kv-cache-memory-bytes",
        "20G",
    ) == ("argument '--no-disable-log-requests': ignored explicit argument '1'")


def test_an_older_flag_the_tables_do_not_class_is_refused_naming_both_releases(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # SGLang 0.5.2 to 0.5.17 register --torchao-config; sglang-older.json does not class it.
    line = ("--available-memory", "40GiB", "--model-path", QWEN3_NEXT)
    assert refusal(
        capsys, "sglang", "--sglang-version", "0.5.13", *line, "--torchao-config", "int8dq"
    ) == (
        "SGLang 0.5.13 flags that change memory in a way decode-ring sglang does not model: "
        "--torchao-config (a SGLang 0.5.13 flag that SGLang 0.5.23 dropped, not classed by the "
        "package); drop it, or pass --allow-unmodelled to answer without it"
    )


def test_an_older_spelling_and_the_new_flag_store_one_value(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # SGLang 0.5.19's --mamba-scheduler-strategy stores mamba_radix_cache_strategy
    # (server_args.py:3920-3927): given beside --mamba-radix-cache-strategy, the last one wins.
    both = answer(
        capsys,
        "sglang",
        "--sglang-version",
        "0.5.19",
        "--available-memory",
        "40GiB",
        "--model-path",
        QWEN3_NEXT,
        "--disable-overlap-schedule",
        "--mamba-radix-cache-strategy",
        "no_buffer",
        "--mamba-scheduler-strategy",
        "extra_buffer",
    )
    assert both["mamba_radix_cache_strategy"] == "extra_buffer"
    assert both["launch"]["repeated"] == ["--mamba-scheduler-strategy"]


def test_each_older_release_reads_the_flags_it_has_and_only_those() -> None:
    for server, release in (("vllm", VLLM), ("sglang", SGLANG)):
        listed = RELEASE_LISTS[server]
        for version in listed["releases"][:-1]:
            spoken = type(release)(release.server, version)
            parser = grammar(release, spoken)
            assert parser.release == spoken
            ranges = listed["flags"]
            order = {one: index for index, one in enumerate(listed["releases"])}
            has = {
                spelling
                for spelling, spans in ranges.items()
                if any(order[a] <= order[version] <= order[b] for a, b in spans)
            }
            dropped = set(listed["older"])
            assert (set(parser.spellings) - set(grammar(release).spellings)) == (has & dropped)
            # The parser's flags name every spelling it reads, the older release's too.
            names = {name for entry in parser.entries for name in (entry.flag, *entry.aliases)}
            assert names == set(parser.spellings)


def test_plans_launch_line_is_read_as_its_release_reads_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    plan = (
        "plan",
        "--server",
        "vllm",
        "--config",
        QWEN3_NEXT,
        "--free",
        "80GiB",
        "--weights",
        "40GiB",
        "--max-model-len",
        "8192",
    )
    # vllm-0.27.0:vllm/engine/arg_utils.py:1244 first registers --use-replayssm.
    assert refusal(capsys, *plan, "--vllm-version", "0.19.1", "--", "--use-replayssm") == (
        "vLLM 0.19.1 has no such flag: --use-replayssm (in 0.27.0-0.33.0)"
    )
    status, out, err = run(capsys, *plan, "--vllm-version", "0.13.0", "--", "--swap-space", "4")
    assert (status, err) == (0, "")
    assert "vLLM 0.13.0" in out


def test_a_list_flag_reads_each_of_its_values(capsys: pytest.CaptureFixture[str]) -> None:
    # --cudagraph-capture-sizes takes one or more integers (nargs "+", vllm-0.33.0:vllm/engine/
    # arg_utils.py); the line's values were handed to the integer reader as one list (a
    # traceback, found by the mutation run).
    line = ("serve", NEMOTRON, "--kv-cache-memory-bytes", "20G", "--cudagraph-capture-sizes")
    assert answer(capsys, "vllm", *line, "1", "2", "4")["cuda_graph_sizes"] == 3
    assert answer(capsys, "vllm", *line, "8")["cuda_graph_sizes"] == 1
    assert refusal(capsys, "vllm", *line, "1", "x") == (
        "argument --cudagraph-capture-sizes: not a non-negative integer: 'x'"
    )


# --- mutation testing (issue 24): the parsers' corners ------------------------------------------


def test_a_switch_is_off_only_by_its_negative_spellings() -> None:
    # vLLM's EnableDisableAction (vllm/utils/argparse_utils.py:120-145): --enable-x pairs with
    # --disable-x, --no-X still works, and any other spelling (a short alias, an abbreviation,
    # which argparse resolves to the flag itself) turns the flag on.
    vllm = grammar(VLLM)

    def given(*words: str) -> list[tuple[str, Any]]:
        line = read_launch(vllm, ["M", *words], serve=True)
        return [(one.entry.flag, one.value) for one in line.given]

    ep = "--enable-expert-parallel"
    assert given("-ep") == [(ep, True)]
    assert given("--disable-expert-parallel") == [(ep, False)]
    assert given("--no-enable-expert-parallel") == [(ep, False)]
    assert given("--enable-prefix-cach") == [("--enable-prefix-caching", True)]
    cascade = "--disable-cascade-attn"
    assert given("--disable-cascade-at") == [(cascade, True)]
    assert given("--enable-cascade-attn") == [(cascade, False)]
    assert given("--no-disable-cascade-attn") == [(cascade, False)]


def test_dotted_keys_nest_append_and_warn_as_vllm_merges_them() -> None:
    # parse_args (argparse_utils.py:421-500): each dotted key a nested dict merged by
    # recursive_dict_update (lists appended, a key set twice a "duplicate key"), a value read
    # as JSON, else a human-readable integer (1k: 1,000; 2K: 2,048), else a string.
    line = read_launch(
        grammar(VLLM),
        [
            "M",
            "--hf-overrides.text_config.rope_scaling.factor", "2",
            "--hf-overrides.text_config.rope_scaling.type", "yarn",
            "--hf-overrides.text_config.max_position_embeddings", "1k",
            "--hf-overrides.text_config.sliding_window", "2K",
            "--hf-overrides.architectures+", "A,B",
            "--hf-overrides.architectures+", "C",
            "--compilation-config.mode", "1",
            "--compilation-config.mode", "3",
            "--compilation-config.pass_config.fuse_norm_quant", "false",
            "--compilation-config.pass_config.fuse_norm_quant", "true",
        ],
        serve=True,
    )  # fmt: skip
    assert json.loads(line.values["hf_overrides"].value) == {
        "text_config": {
            "rope_scaling": {"factor": 2, "type": "yarn"},
            "max_position_embeddings": 1000,
            "sliding_window": 2048,
        },
        "architectures": ["A", "B", "C"],
    }
    assert json.loads(line.values["compilation_config"].value) == {
        "mode": 3,
        "pass_config": {"fuse_norm_quant": True},
    }
    assert line.warnings == (
        "Found duplicate keys --compilation-config.mode, "
        "--compilation-config.pass_config.fuse_norm_quant",
    )
    # One list key alone is a list.
    alone = read_launch(grammar(VLLM), ["M", "--hf-overrides.architectures+", "A"], serve=True)
    assert json.loads(alone.values["hf_overrides"].value) == {"architectures": ["A"]}
    assert alone.warnings == ()
    # A value replaced by a nested one is a key set again: recursive_dict_update finds "a"
    # in the original and not a dict there (argparse_utils.py:429-438).
    nested = ["M", "--hf-overrides.a", "1", "--hf-overrides.a.b", "2"]
    over = read_launch(grammar(VLLM), nested, serve=True)
    assert json.loads(over.values["hf_overrides"].value) == {"a": {"b": 2}}
    assert over.warnings == ("Found duplicate keys --hf-overrides.a",)
    deeper = ["M", "--hf-overrides.a.b", "1", "--hf-overrides.a.b.c", "2"]
    over = read_launch(grammar(VLLM), deeper, serve=True)
    assert json.loads(over.values["hf_overrides"].value) == {"a": {"b": {"c": 2}}}
    assert over.warnings == ("Found duplicate keys --hf-overrides.a.b",)


def test_a_pasted_command_by_its_path_or_the_cli_modules_serve(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # A program named by its path is the program; vLLM's CLI module with "serve" reads the
    # model as serve's positional.
    by_path = answer(capsys, "vllm", "--", "/opt/venv/bin/vllm", "serve", QWEN3_NEXT, "-tp", "2")
    assert by_path["tensor_parallel_size"] == 2
    module = answer(
        capsys, "vllm", "--", "python3", "-m", "vllm.entrypoints.cli.main", "serve", QWEN3_NEXT,
        "-tp", "2",
    )  # fmt: skip
    assert module["tensor_parallel_size"] == 2
    image = "vllm/vllm-openai:v0.33.0"
    volume = "--volume=/home/user/.cache/huggingface:/root/.cache/huggingface"
    docker = refusal(capsys, "vllm", "--", "docker", "run", volume, image, "--model", QWEN3_NEXT)
    # The first four words, quoted to 60 characters.
    got = f"docker run {volume} {image}"
    assert docker == (
        "after --, give the vLLM command: python -m vllm.entrypoints.openai.api_server or python "
        "-m vllm.entrypoints.cli.main serve or vllm serve; got "
        f"'{got[:60]}'... ({len(got)} characters)"
    )
    assert refusal(capsys, "sglang", "--", "vllm", "serve", QWEN3_NEXT) == (
        "after --, give the SGLang command: python -m sglang.launch_server or sglang serve or "
        "python -m sglang.launch_server serve; got 'vllm serve " + QWEN3_NEXT[:49] + "'... ("
        f"{len('vllm serve ' + QWEN3_NEXT)} characters)"
    )


def test_the_other_servers_package_flag_is_not_called_decode_rings_here(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # --activation-memory is the vllm command's own flag, not the sglang command's.
    line = refusal(capsys, "sglang", "--model-path", NEMOTRON, "--activation-memory", "1GiB")
    assert line == "'--activation-memory' is not a SGLang 0.5.23 flag"
    line = refusal(capsys, "vllm", "serve", QWEN3_NEXT, "--available-memory", "1GiB")
    assert line == "'--available-memory' is not a vLLM 0.33.0 flag"


def test_a_yaml_configs_flags_go_where_each_server_puts_them(tmp_path: Path) -> None:
    pytest.importorskip("yaml")
    # vLLM (_pull_args_from_config, argparse_utils.py:516-604): after serve's model, so a list
    # flag last in the file does not take the model; before the line's flags, which win.
    config = tmp_path / "serve.yaml"
    config.write_text("max-num-seqs: 8\nserved-model-name: [a, b]\n")
    vllm = grammar(VLLM)
    line = read_launch(vllm, ["M", "--config", str(config), "--max-num-seqs", "4"], serve=True)
    assert line.model == "M" and line.config_file == str(config)
    assert [(one.entry.flag, one.value) for one in line.given] == [
        ("--max-num-seqs", "8"),
        ("--served-model-name", ["a", "b"]),
        ("--max-num-seqs", "4"),
    ]
    # With no model on the line, the file's flags come first.
    named = tmp_path / "named.yaml"
    named.write_text("model: M\n")
    line = read_launch(vllm, ["--config", str(named), "--max-num-seqs", "4"], serve=True)
    assert [(one.entry.flag, one.value) for one in line.given] == [
        ("--model", "M"),
        ("--max-num-seqs", "4"),
    ]
    # SGLang (_convert_config_to_args, server_args_config_parser.py:164-214): a switch true is
    # the flag, false nothing; a bool for a flag taking a value is "true"/"false"; a list its
    # items; the file before the whole line.
    sglang = tmp_path / "launch.yaml"
    sglang.write_text(
        "model-path: M\nmonokernel-backend: false\nenable-torch-compile: true\n"
        "disable-radix-cache: false\ncuda-graph-bs-decode: [1, 2]\nallowed-media-domains: []\n"
    )
    line = read_launch(grammar(SGLANG), ["--tp-size", "2", "--config", str(sglang)])
    assert [(one.entry.flag, one.value) for one in line.given] == [
        ("--model-path", "M"),
        ("--monokernel-backend", "false"),
        ("--enable-torch-compile", True),
        ("--cuda-graph-bs-decode", ["1", "2"]),
        ("--tp-size", "2"),
    ]


def test_a_yaml_configs_refusals_whole(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("yaml")
    vllm = grammar(VLLM)

    def refused(path: str) -> str:
        with pytest.raises(UsageError) as raised:
            read_launch(vllm, ["M", "--config", path], serve=True)
        return str(raised.value)

    # The extension is the part after the last dot (a dot in a folder's name is no extension).
    folder = tmp_path / "conf.d"
    folder.mkdir()
    (folder / "serve.yaml").write_text("max-num-seqs: 8\n")
    line = read_launch(vllm, ["M", "--config", str(folder / "serve.yaml")], serve=True)
    assert [one.value for one in line.given] == ["8"]
    long = "x" * 61 + ".json"
    assert refused(long) == (
        f"--config '{'x' * 60}'... (66 characters): vLLM reads only .yaml or .yml, in lower case"
    )
    assert refused("flags") == "--config 'flags': vLLM reads only .yaml or .yml, in lower case"
    with pytest.raises(UsageError) as raised:
        read_launch(grammar(SGLANG), ["--config", "flags.json"], serve=False)
    assert str(raised.value) == "--config 'flags.json': SGLang reads only .yaml or .yml"
    # SGLang refuses a key of a flag with a --no- form, whatever its value (from 0.5.8; before,
    # "--KEY true" left a word its parser refuses).
    monkeypatch.chdir(tmp_path)
    reason = (
        "SGLang refuses the key 'enable-tf32-matmul', a flag with a --no- form (\"Unsupported "
        "config option ... with action 'BooleanOptionalAction'\", sglang/srt/utils/"
        "server_args_config_parser.py:168-173)"
    )
    long = "n" * 56 + ".yaml"  # 61 characters: quoted to 60
    Path(long).write_text("enable-tf32-matmul: true\n")
    with pytest.raises(UsageError) as raised:
        read_launch(grammar(SGLANG), ["--config", long], serve=False)
    assert str(raised.value) == f"--config '{'n' * 56}.yam'... (61 characters): {reason}"
    for value in ("true", "false", "1"):
        Path("negatable.yaml").write_text(f"enable-tf32-matmul: {value}\n")
        with pytest.raises(UsageError) as raised:
            read_launch(grammar(SGLANG), ["--config", "negatable.yaml"], serve=False)
        assert str(raised.value) == f"--config 'negatable.yaml': {reason}"
    absent = str(tmp_path / "absent.yaml")
    assert refused(absent) == f"cannot read '{absent}': No such file or directory"
    broken = tmp_path / "broken.yaml"
    broken.write_text("a: [1\n")
    assert refused(str(broken)).startswith(f"--config '{broken}': not YAML: while parsing a ")
    assert "\n" not in refused(str(broken))
    listed = tmp_path / "list.yaml"
    listed.write_text("- 1\n")
    assert refused(str(listed)) == f"--config '{listed}': the file must hold a mapping of flags"
    # vLLM puts a true as the bare flag (argparse_utils.py:654-657), whatever the flag takes;
    # SGLang a true of a key it has no action for as the flag, which its parser refuses.
    valued = tmp_path / "valued.yaml"
    valued.write_text("max-num-seqs: true\n")
    assert refused(str(valued)) == "argument '--max-num-seqs': expected one argument"
    unknown = tmp_path / "unknown.yaml"
    unknown.write_text("bogus-switch: true\n")
    with pytest.raises(UsageError) as raised:
        read_launch(grammar(SGLANG), ["--model-path", "M", "--config", str(unknown)])
    assert str(raised.value) == "'--bogus-switch' is not a SGLang 0.5.23 flag"
    empty = tmp_path / "empty.yaml"
    empty.write_text("")
    assert read_launch(vllm, ["M", "--config", str(empty)], serve=True).given == ()
    monkeypatch.setitem(sys.modules, "yaml", None)  # import yaml raises ImportError
    assert refused(str(empty)) == (
        "--config FILE.yaml needs PyYAML, which the servers read it with: "
        "pip install 'decode_ring[yaml]'"
    )


def test_vllm_reads_dash_o_as_the_optimization_level(capsys: pytest.CaptureFixture[str]) -> None:
    # parse_args (argparse_utils.py:383-409): -O3 and -O=3 are --optimization-level 3, and -O
    # is when a level 0 to 3 follows it; vLLM registers no -O of its own.
    vllm = grammar(VLLM)

    def given(*words: str) -> list[tuple[str, Any]]:
        line = read_launch(vllm, ["M", *words], serve=True)
        assert line.model == "M"
        return [(one.entry.flag, one.value) for one in line.given]

    level = "--optimization-level"
    assert given("-O3") == [(level, "3")]
    assert given("-O=2") == [(level, "2")]
    for digit in "0123":
        assert given("-O", digit, "-tp", "2") == [(level, digit), ("--tensor-parallel-size", "2")]
    assert given("-tp", "2", "-O", "3") == [("--tensor-parallel-size", "2"), (level, "3")]
    for words in (("-O", "4"), ("-O",)):
        line = refusal(capsys, "vllm", "serve", QWEN3_NEXT, *words)
        assert line == "'-O' is not a vLLM 0.33.0 flag"
    assert refusal(capsys, "vllm", "serve", QWEN3_NEXT, "-o3") == "'-o3' is not a vLLM 0.33.0 flag"


def test_vllms_rewrites_of_flags_written_with_equals_and_dots(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # argparse_utils.py:383-500: "_" becomes "-" in the flag's name only up to its first dot;
    # a repeat is found by the name before "=" (the value may hold "="); "--flag=value" with a
    # dot only in the value is no dotted key; a dotted key without its value is refused.
    vllm = grammar(VLLM)
    line = read_launch(
        vllm,
        [
            "M",
            "--max-num-seqs=8",
            "--served-model-name=a=b",
            "--gpu-memory-utilization=0.5",
            "--hf-overrides.rope_theta=1e6",
            "--hf_overrides.a--b_c", "1",
            "--max-num-seqs=16",
            "--served-model-name=c",
        ],
        serve=True,
    )  # fmt: skip
    assert json.loads(line.values["hf_overrides"].value) == {"rope_theta": 1e6, "a--b_c": 1}
    assert line.values["gpu_memory_utilization"].value == "0.5"
    assert line.values["served_model_name"].value == ["c"]
    assert line.warnings == ("Found duplicate keys --max-num-seqs, --served-model-name",)
    key = "--hf-overrides.rope_scaling.original_max_position_embeddings"
    assert refusal(capsys, "vllm", "serve", QWEN3_NEXT, key) == (
        f"argument '{key[:40]}'... ({len(key)} characters): expected one argument"
    )


def test_each_flag_takes_as_many_values_as_its_nargs(capsys: pytest.CaptureFixture[str]) -> None:
    # argparse: nargs None one value, "?" one or none (then its default), "+" one or more, "*"
    # any; an attached value is one value (a list of one for "+" and "*"); a switch stores
    # True (store_true, default False or None); a word with a space is a value though it
    # starts with "-".
    vllm, sglang = grammar(VLLM), grammar(SGLANG)

    def given(parser: Any, *words: str) -> list[tuple[str, Any]]:
        line = read_launch(parser, list(words), serve=parser is vllm)
        return [(one.entry.flag, one.value) for one in line.given]

    assert given(vllm, "M", "--hf-token") == [("--hf-token", None)]
    assert given(vllm, "M", "--hf-token", "t", "-tp", "2") == [
        ("--hf-token", "t"),
        ("--tensor-parallel-size", "2"),
    ]
    assert given(vllm, "M", "--served-model-name", "-x y", "z") == [
        ("--served-model-name", ["-x y", "z"])
    ]
    assert given(sglang, "--lora-paths=a", "--enable-lora", "--help") == [
        ("--lora-paths", ["a"]),
        ("--enable-lora", True),
        ("--help", True),
    ]
    assert refusal(capsys, "vllm", "serve", QWEN3_NEXT, "--max-num-seqs", "8", "9") == (
        "vLLM 0.33.0: unexpected argument '9'"
    )
    assert refusal(capsys, "vllm", "serve", QWEN3_NEXT, "--hf-token", "t", "u") == (
        "vLLM 0.33.0: unexpected argument 'u'"
    )
    assert refusal(capsys, "vllm", "serve", QWEN3_NEXT, "--served-model-name") == (
        "argument '--served-model-name': expected at least one argument"
    )
    flag = "--expert-distribution-recorder-buffer-size"
    assert refusal(capsys, "sglang", "--model-path", NEMOTRON, flag) == (
        f"argument '{flag[:40]}'... ({len(flag)} characters): expected one argument"
    )


def test_an_ambiguous_prefix_names_the_first_six_flags_it_could_be() -> None:
    # argparse's _parse_optional (allow_abbrev): a prefix of two or more flags is an error
    # naming them; the package names the first six, in order.
    def refused(release: Any, *words: str) -> str:
        with pytest.raises(UsageError) as raised:
            read_launch(grammar(release), list(words), serve=release is VLLM)
        return str(raised.value)

    assert refused(VLLM, "M", "--allow-") == (
        "vLLM 0.33.0: ambiguous option: '--allow-' could match --allow-credentials, "
        "--allow-deprecated-quantization"
    )
    # A word with a space is a value only if no flag (nor an ambiguous prefix) precedes its "=".
    assert refused(VLLM, "M", "--allow-=a b") == refused(VLLM, "M", "--allow-")
    note = read_launch(grammar(VLLM), ["M", '--hf-overrides={"note": "x = y"}'], serve=True)
    assert note.values["hf_overrides"].value == '{"note": "x = y"}'
    prefix = "--remote-instance-weight-loader-seed-instance-"
    assert refused(SGLANG, prefix, "x") == (
        f"SGLang 0.5.23: ambiguous option: '{prefix[:40]}'... ({len(prefix)} characters) could "
        f"match {prefix}ip, {prefix}service-port"
    )
    generated = json.loads((FLAGS / f"sglang-{SGLANG.version}.json").read_text())["flags"]
    spellings = sorted(
        one
        for entry in generated
        for one in (entry["flag"], *entry["aliases"])
        if one.startswith("--enable-m")
    )
    assert len(spellings) > 6
    assert refused(SGLANG, "--enable-m") == (
        f"SGLang 0.5.23: ambiguous option: '--enable-m' could match {', '.join(spellings[:6])}"
    )


def test_a_second_model_or_a_positional_off_serve_is_refused_whole() -> None:
    # vllm serve takes its model as a positional or --model moved there (argparse_utils.py:
    # 324-356), not both; the api_server's line reads the model from --model only.
    vllm = grammar(VLLM)
    first, second = "/models/" + "a" * 41, "/models/" + "b" * 41
    with pytest.raises(UsageError) as raised:
        read_launch(vllm, [first, "--model", second], serve=True)
    assert str(raised.value) == (
        f"vLLM 0.33.0: the model is given twice, '{first[:40]}'... (49 characters) and --model "
        f"'{second[:40]}'... (49 characters): vLLM refuses that"
    )
    with pytest.raises(UsageError) as raised:
        read_launch(vllm, [first, "-tp", "2"])
    assert str(raised.value) == (
        f"vLLM 0.33.0: unexpected argument '{first[:40]}'... (49 characters) (this entry point "
        "reads the model from --model)"
    )


def test_the_no_effect_list_keeps_flags_and_json_keys_in_order(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # --port and the compilation config's cache_dir change no memory (the class table); both
    # are listed, in the line's order.
    result = answer(
        capsys, "vllm", "serve", QWEN3_NEXT, "--port", "8000",
        "--compilation-config.cache_dir", "/tmp/c", "--host", "0.0.0.0",
    )  # fmt: skip
    assert result["launch"]["no_effect"] == ["--port", "--host", "--compilation-config.cache_dir"]
    # A flag given again is listed where its last value is.
    again = answer(capsys, "vllm", "serve", QWEN3_NEXT, "--port", "1", "--host", "h", "--port", "2")
    assert again["launch"]["no_effect"] == ["--host", "--port"]


def test_the_servers_yaml_flag_given_twice_or_without_its_file_is_refused() -> None:
    # _pull_args_from_config (argparse_utils.py:551-557): one --config, and a file after it.
    vllm = grammar(VLLM)
    for words, message in (
        (["M", "--config", "a.yaml", "--config", "b.yaml"], "more than one --config file given"),
        (["M", "--config"], "--config needs a YAML file"),
    ):
        with pytest.raises(UsageError) as raised:
            read_launch(vllm, words, serve=True)
        assert str(raised.value) == f"vLLM 0.33.0: {message}"
