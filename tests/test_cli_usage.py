"""The command line's usage: every refusal of a command line is one line on stderr with status 2
(and, with ``--json``, a JSON object on stdout); flags are never abbreviated; help and version.

Every command line runs through ``cli.main`` in this process (the ``cell`` fixture: a stand-in
once-cell, the ring's variables unset, run from the repository's root on a terminal 100 columns
wide). Help text is compared with its whitespace squeezed, so that fragments hold wherever a
Python version wraps it.
"""

from __future__ import annotations

import importlib.metadata
import json
import re

import pytest

from .support import run, squeeze, usage_error

NEMOTRON = "tests/configs/nemotron-nano-9b-v2.json"
PLAN_ARGS = ["plan", "--config", NEMOTRON, "--free", "1GiB", "--weights", "1GiB"]
PLAN_8K = ["plan", "--config", NEMOTRON, "--free", "80GiB", "--weights", "16GiB", "--other", "4GiB"]
PLAN_8K += ["--max-model-len", "8192"]
pytestmark = pytest.mark.usefixtures("cell")


# --- refusals -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["decide", "--ssm-layers", "x"],
            "argument --ssm-layers: not a non-negative integer: 'x'",
        ),
        (["state", "--config", NEMOTRON, "--tp", "0"], "argument --tp: must be at least 1"),
        (
            ["state", "--config", NEMOTRON, "--tp", "2.0"],
            "argument --tp: not a non-negative integer: '2.0'",
        ),
        (
            [*PLAN_ARGS, "--tp", "1,2,1"],
            "argument --tp: a value repeats in '1,2,1'",
        ),
        (
            [*PLAN_ARGS, "--max-batch-size", "8,0"],
            "argument --max-batch-size: must be at least 1",
        ),
        (
            ["decide", "--ssm-layers", "1", "--ssm-decode-ring-slots", "9"],
            "argument --ssm-decode-ring-slots: ssm-decode-ring-slots 9 exceeds the 8 the ring "
            "is sized for",
        ),
        (
            ["fit", "--example", "--free", "14.1"],
            "argument --free: invalid size '14.1': bytes must be whole; did you mean 14.1GiB? "
            "Write bytes, or a number with a unit: Ki/KiB, Mi/MiB, Gi/GiB, Ti/TiB (powers of "
            "1024) or K/KB, M/MB, G/GB, T/TB (powers of 1000), any case, e.g. 14.1GiB",
        ),
        (
            ["state", "--config", NEMOTRON, "--layout", "x"],
            "argument --layout: invalid choice: 'x' (choose from vllm, sglang, metrale)",
        ),
        (["fit", "--fr", "1"], "unrecognized arguments: --fr 1"),
        (["decide", "--ssm-layers", "1", "a\nb"], "unrecognized arguments: a\\nb"),
        (["--fr"], "unrecognized arguments: --fr"),
    ],
)
def test_usage_errors_are_one_line(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    got = usage_error(capsys, *args)
    # argparse quotes choices differently across Python versions.
    if "choose from" in message:
        assert got.replace("'", "").replace('"', "") == message.replace("'", "")
    else:
        assert got == message


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["decide"], "--ssm-layers"),
        (["decide", "--ssm-layers", "-1"], "not a non-negative integer"),
        (
            ["decide", "--ssm-layers", "48", "--ssm-decode-ring-slots", "9"],
            "ssm-decode-ring-slots 9 exceeds the 8 the ring is sized for",
        ),
        (
            ["decide", "--ssm-layers", "48", "--ssm-decode-ring-slots", " 1"],
            "unknown ssm-decode-ring-slots ' 1' (valid: auto, 0..=8)",
        ),
        (["fit", "--ssm-layers", "48"], "fit needs --max-batch-size"),
        (["fit", "--example", "--free", "14x"], "invalid size '14x'"),
        (["fit", "--example", "--kv-floor", "1GiB"], "--kv-floor and --headroom go together"),
        (
            ["fit", "--example", "--max-batch-size", "4294967296", "--per-seq-state", "4GiB"],
            "exceeds",
        ),
        (["launch"], "invalid choice"),
        ([], "command"),
    ],
)
def test_usage_errors_are_one_line_and_exit_two(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    refusal = usage_error(capsys, *args)
    assert message in refusal
    assert "Traceback" not in refusal


@pytest.mark.parametrize(
    "args", [["fit", "--fr", "64GiB", "--example"], ["fit", "--exam"], ["decide", "--ssm", "4"]]
)
def test_abbreviated_flags_are_refused(capsys: pytest.CaptureFixture[str], args: list[str]) -> None:
    message = usage_error(capsys, *args)
    assert "unrecognized arguments" in message or "required" in message


def test_other_commands_keep_argparses_refusal(capsys: pytest.CaptureFixture[str]) -> None:
    assert usage_error(capsys, "state", "--config", NEMOTRON, "--gpu-memory-utilization", "1") == (
        "unrecognized arguments: --gpu-memory-utilization 1"
    )


def cut(text: str) -> str:
    """How a refusal quotes a value of 41 characters or more: its first 40, then the length."""
    return f"{text[:40]!a}... ({len(text)} characters)"


X41 = "x" * 41
INF41 = "inf" + " " * 38


@pytest.mark.parametrize(
    ("args", "message"),
    [
        # A leading "+" is a sign, as Rust's usize parser takes it; a count of layers past the
        # models' bound is refused before it is parsed, quoting at most 40 digits.
        (
            ["decide", "--ssm-layers", "+" + "9" * 40],
            f"argument --ssm-layers: {'9' * 40} layers is implausible (at most 100,000)",
        ),
        (
            ["decide", "--ssm-layers", "9" * 41],
            f"argument --ssm-layers: {'9' * 40}... (41 digits) layers is implausible (at most "
            "100,000)",
        ),
        (
            # Leading zeros are not digits of the count: the refusal quotes the number.
            ["decide", "--ssm-layers", "000" + "1000000"],
            "argument --ssm-layers: 1000000 layers is implausible (at most 100,000)",
        ),
        (
            # A count past a usize is "too large" with or without its sign, quoted as given.
            ["fit", "--example", "--max-batch-size", "+18446744073709551616"],
            "argument --max-batch-size: too large: '+18446744073709551616' exceeds "
            "18446744073709551615",
        ),
        (
            ["fit", "--example", "--max-batch-size", "9" * 41],
            f"argument --max-batch-size: too large: {cut('9' * 41)} exceeds 18446744073709551615",
        ),
        (
            ["decide", "--ssm-layers", X41],
            f"argument --ssm-layers: not a non-negative integer: {cut(X41)}",
        ),
        (
            [*PLAN_ARGS, "--tp", "1," * 20 + "1"],
            f"argument --tp: a value repeats in {cut('1,' * 20 + '1')}",
        ),
        (
            ["vllm", "--config", NEMOTRON, "--max-num-seqs", X41],
            f"argument --max-num-seqs: not a non-negative integer: {cut(X41)}",
        ),
        (
            ["vllm", "--config", NEMOTRON, "--max-num-seqs", "1" * 41],
            f"argument --max-num-seqs: more than 2**63 - 1: {cut('1' * 41)}",
        ),
        (
            ["vllm", "--config", NEMOTRON, "--max-model-len", "auto" + " " * 37],
            f"argument --max-model-len: {cut('auto' + ' ' * 37)}: vLLM's "
            "auto-fit of the length to memory is not modelled",
        ),
        (
            ["vllm", "--config", NEMOTRON, "--max-model-len", "1" * 40 + "k"],
            f"argument --max-model-len: more than 2**63 - 1: {cut('1' * 40 + 'k')}",
        ),
        (
            ["vllm", "--config", NEMOTRON, "--speculative-config", "{" * 41],
            f"argument --speculative-config: not JSON: {cut('{' * 41)}",
        ),
        (
            ["vllm", "--config", NEMOTRON, "--speculative-config", "[" + "1," * 19 + "1]"],
            f"argument --speculative-config: must be a JSON object: {cut('[' + '1,' * 19 + '1]')}",
        ),
        (
            ["vllm", "--config", NEMOTRON, "--speculative-config", '{"' + "k" * 41 + '": 1}'],
            f"argument --speculative-config: {cut('k' * 41)} is not a key of vLLM 0.33.0's "
            "--speculative-config",
        ),
        (
            ["vllm", "--config", NEMOTRON, "--" + "x" * 39],
            f"{cut('--' + 'x' * 39)} is not a vLLM 0.33.0 flag",
        ),
        (
            ["vllm", "--config", NEMOTRON, "--gpu-memory-utilization", X41],
            f"argument --gpu-memory-utilization: not a number: {cut(X41)}",
        ),
        (
            # float() takes the spaces around "inf"; an infinite fraction is refused.
            ["vllm", "--config", NEMOTRON, "--gpu-memory-utilization", INF41],
            f"argument --gpu-memory-utilization: not a finite number: {cut(INF41)}",
        ),
        (
            ["sglang", "--config", NEMOTRON, "--mem-fraction-static", INF41],
            f"argument --mem-fraction-static: not a finite number: {cut(INF41)}",
        ),
        (
            ["vllm", "--config", NEMOTRON, "--cpu-offload-gb", "-1"],
            "argument --cpu-offload-gb: must be 0 or more: '-1'",
        ),
        (
            ["vllm", "--config", NEMOTRON, "--cpu-offload-gb", "-" + "1" * 40],
            f"argument --cpu-offload-gb: must be 0 or more: {cut('-' + '1' * 40)}",
        ),
        (
            ["vllm", "--config", NEMOTRON, "--hf-overrides", "{" * 41],
            f"argument --hf-overrides: not JSON: {cut('{' * 41)}",
        ),
        (
            ["vllm", "--config", NEMOTRON, "--hf-overrides", "[" + "1," * 19 + "1]"],
            f"argument --hf-overrides: must be a JSON object: {cut('[' + '1,' * 19 + '1]')}",
        ),
        (
            ["sglang", "--config", NEMOTRON, "--mamba-full-memory-ratio", X41],
            f"argument --mamba-full-memory-ratio: not a number: {cut(X41)}",
        ),
        (
            ["sglang", "--config", NEMOTRON, "--mamba-full-memory-ratio", "-" + "1" * 40],
            "argument --mamba-full-memory-ratio: must be a finite number above 0: "
            f"{cut('-' + '1' * 40)}",
        ),
        (
            ["sglang", "--config", NEMOTRON, "--speculative-algorithm", X41],
            f"argument --speculative-algorithm: {cut(X41)} is not modelled; use EAGLE, EAGLE3, "
            "NEXTN, MTP",
        ),
        (
            ["sglang", "--config", NEMOTRON, "--available-memory", "60GiB", X41],
            f"SGLang 0.5.23: unexpected argument {cut(X41)}",
        ),
    ],
)
def test_a_refusal_quotes_at_most_40_characters_of_a_value(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    assert usage_error(capsys, *args) == message


def test_fit_names_config_as_the_way_to_give_the_layers(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert usage_error(
        capsys, "fit", "--per-seq-state", "1MiB", "--max-batch-size", "8", "--free", "1GiB"
    ) == ("fit needs --ssm-layers, --reserve-without-ring (or --config, or --example)")


def test_json_is_read_from_the_processs_own_arguments(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from decode_ring.cli import main

    # The console script calls main() with no arguments: --json comes from sys.argv[1:].
    monkeypatch.setattr("sys.argv", ["decode-ring", "--json"])
    assert main() == 2
    out, err = capsys.readouterr()
    assert json.loads(out) == {"error": "unrecognized arguments: --json", "status": 2}
    assert err == "decode-ring: error: unrecognized arguments: --json\n"


def test_a_usage_error_with_json_is_a_json_object_too(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "fit", "--example", "--free", "80", "--json")
    assert status == 2
    assert json.loads(out) == {"error": err[len("decode-ring: error: ") : -1], "status": 2}
    assert err.count("\n") == 1


def test_a_bare_decode_ring_suggests_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert usage_error(capsys) == (
        "no command: give one of decide, fit, state, plan, vllm, sglang "
        "(decode-ring --help says more)"
    )


def test_max_batch_size_zero_is_refused_everywhere(capsys: pytest.CaptureFixture[str]) -> None:
    for args in (
        ["fit", "--example", "--max-batch-size", "0"],
        ["state", "--config", NEMOTRON, "--max-batch-size", "0"],
        [*PLAN_8K, "--max-batch-size", "0"],
    ):
        assert usage_error(capsys, *args) == "argument --max-batch-size: must be at least 1"


# --- help and version -----------------------------------------------------------------------------


def test_help_is_plain_text(capsys: pytest.CaptureFixture[str]) -> None:
    for args in ([], ["fit"], ["plan"], ["state"], ["decide"], ["vllm"], ["sglang"]):
        status, out, _ = run(capsys, *args, "--help")
        assert status == 0
        assert "``" not in out
    assert "powers of 1024" in squeeze(run(capsys, "fit", "--help")[1])


def help_of(capsys: pytest.CaptureFixture[str], *command: str) -> str:
    status, out, err = run(capsys, *command, "--help")
    assert (status, err) == (0, "")
    return squeeze(out)


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "--version") == (0, "decode-ring 0.1.0\n", "")
    assert importlib.metadata.version("decode_ring") == "0.1.0"  # the installed distribution's


def test_top_level_help(capsys: pytest.CaptureFixture[str]) -> None:
    text = help_of(capsys)
    assert text.startswith(
        "usage: decode-ring [-h] [--version] {decide,fit,state,plan,vllm,sglang} ..."
    )
    assert "Each command has a function" not in text  # only the docstring's first paragraph
    assert "Exit status" not in text  # only the docstring's first paragraph
    for fragment in [
        "decode-ring: the depth a server would choose here and now, its fit, and a model's state.",
        "decide the depth the runtime would choose here",
        "fit preflight: request, fit to memory, publish",
        "state a model's SSM state from its config.json",
        "plan depth by tensor-parallel size and batch, memory per rank",
        # Issue 19: the exit statuses and the environment variables.
        "exit status: 0 the chosen depth fits",
        "1 the server would refuse to boot (fit, vllm, sglang: its own refusal on stderr); no "
        "cell of the grid boots (plan)",
        "2 a usage error, or a config that cannot be read or that the servers refuse",
        "74 the output (or the --plot file) cannot be written",
        "130 interrupted",
        "141 the reader closed the pipe early",
        "environment: METRALE_SSM_DECODE_RING 1: the full ring, 0: none (the decision)",
        "METRALE_DISABLE_WATCHDOGS true (any case, trimmed): skip the ring",
        "METRALE_SSM_RESERVE_RING_FULL present, any value: fit reserves the full depth",
        "DECODE_RING_NO_EXTENSIONS set, not empty or 0: the pure-Python core",
        "HF_HOME, HF_HUB_CACHE where --config ORG/NAME is looked up",
        "vllm what vLLM 0.33.0 reserves for the state, from a launch line's flags",
        "sglang what SGLang 0.5.23 reserves for the state, from a launch line's flags",
    ]:
        assert fragment in text


def test_the_top_level_help_prints_its_tables_as_written(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, _ = run(capsys, "--help")
    assert status == 0
    assert "\n  130  interrupted\n  141  the reader closed the pipe early\n" in out


COMMON_HELP = [
    "--ssm-layers N SSM layers in the model",
    "--speculative speculative decode (or dflash) is on",
    "--ssm-decode-ring-slots auto|N the server flag: N (0 to 8) pins a depth",
    "--json one JSON object on stdout",
]


CONFIG_HELP = (
    "--config PATH the model: a config.json, a snapshot directory, a models--ORG--NAME cache "
    "folder, ORG/NAME from the local Hugging Face cache (pip install 'decode_ring[hub]'), or - "
    "for stdin"
)


MODEL_HELP = [
    CONFIG_HELP,
    "--layout {vllm,sglang,metrale} whose layout",
    "--conv-dtype D bfloat16, float16 or float32",
    "--ssm-dtype D bfloat16, float16 or float32",
    "--speculative-tokens N draft tokens per step (vLLM widens the conv window)",
]


SEE_TOP_HELP = "Exit statuses and environment variables: decode-ring --help."


SIZE_EPILOG = (
    "SIZE: bytes, or a number with a unit: Ki/KiB, Mi/MiB, Gi/GiB, Ti/TiB (powers of 1024) or "
    "K/KB, M/MB, G/GB, T/TB (powers of 1000), any case, e.g. 14.1GiB. So 80G is 80 x 10^9 "
    "bytes and 80GiB 80 x 2^30. A bare number is bytes, and a bare number under 1 MiB (but 0) "
    f"is refused: write 80GiB, or 80B to mean bytes. {SEE_TOP_HELP}"
)


def test_decide_help(capsys: pytest.CaptureFixture[str]) -> None:
    text = help_of(capsys, "decide")
    assert text.startswith(
        "usage: decode-ring decide [-h] [--ssm-layers N] [--speculative] "
        "[--ssm-decode-ring-slots auto|N] [--json] [--config PATH]"
    )
    for fragment in [*COMMON_HELP, CONFIG_HELP]:
        assert fragment in text
    assert text.endswith(SEE_TOP_HELP)


def test_fit_help(capsys: pytest.CaptureFixture[str]) -> None:
    text = help_of(capsys, "fit")
    assert text.startswith(
        "usage: decode-ring fit [-h] [--ssm-layers N] [--speculative] "
        "[--ssm-decode-ring-slots auto|N] [--json] [--example] [--max-batch-size B] "
        "[--per-seq-state SIZE] [--reserve-without-ring SIZE] [--free SIZE] [--kv-floor SIZE] "
        "[--headroom SIZE] [--config PATH] [--tp N] [--layout {vllm,sglang,metrale}] "
        "[--conv-dtype D] [--ssm-dtype D] [--speculative-tokens N]"
    )
    for fragment in [
        *COMMON_HELP,
        *MODEL_HELP,
        "--example the worked example (flags given override it)",
        "--max-batch-size B --per-seq-state SIZE recurrent state of one sequence, all SSM layers",
        "--reserve-without-ring SIZE pre-load: the rest of the reserve",
        "--free SIZE pre-load: free memory",
        "--kv-floor SIZE post-load: the KV-cache floor (with --headroom)",
        "--headroom SIZE post-load: the predicted KV headroom (with --kv-floor)",
        "--tp N --layout",
    ]:
        assert fragment in text
    assert text.endswith(SIZE_EPILOG)


def test_state_help(capsys: pytest.CaptureFixture[str]) -> None:
    text = help_of(capsys, "state")
    assert text.startswith(
        "usage: decode-ring state [-h] --config PATH [--tp N] [--layout {vllm,sglang,metrale}] "
        "[--conv-dtype D] [--ssm-dtype D] [--speculative-tokens N] [--vllm-version VERSION] "
        "[--sglang-version VERSION] [--max-batch-size B] [--json]"
    )
    for fragment in [
        *MODEL_HELP,
        "--tp N --layout",
        "--max-batch-size B also size the ring",
        "--json one JSON object on stdout",
        "--vllm-version VERSION the vLLM release whose rules answer",
        "--sglang-version VERSION the SGLang release whose rules answer",
    ]:
        assert fragment in text
    assert "SIZE" not in text
    assert text.endswith(SEE_TOP_HELP)


def test_plan_help(capsys: pytest.CaptureFixture[str]) -> None:
    text = help_of(capsys, "plan")
    assert text.startswith(
        "usage: decode-ring plan [-h] [--config PATH] [--layout {vllm,sglang,metrale}] "
        "[--conv-dtype D] [--ssm-dtype D] [--speculative-tokens N] [--vllm-version VERSION] "
        "[--sglang-version VERSION] [--ssm-layers N] "
        "[--per-seq-state SIZE] [--free SIZE] [--gpu NAME] [--gpu-memory SIZE] [--weights SIZE] "
        "[--other SIZE] "
        "[--max-model-len N] [--tp N,N,...] [--max-batch-size B,B,...] "
        "[--server {metrale,vllm,sglang}] [--plot FILE] [--json]"
    )
    for fragment in [
        *MODEL_HELP,
        "--ssm-layers N SSM layers in the model",
        "--per-seq-state SIZE without --config: one sequence's recurrent state at tp 1 "
        "(divided evenly by tp)",
        "--free SIZE per rank (under --server vllm or sglang, --gpu or --gpu-memory instead: "
        "the server's own budget)",
        "--weights SIZE the whole checkpoint, divided evenly by tp (default: a snapshot's "
        "model.safetensors.index.json total_size)",
        "--other SIZE per rank, what does not depend on the model: activations, workspace "
        "(default 0)",
        "--max-model-len N tokens per sequence that the KV cache holds (needed when the model "
        "has attention)",
        "--tp N,N,... tensor-parallel sizes (default 1,2,4,8)",
        "--max-batch-size B,B,... batch sizes (default 8,16,32,64,128,256,512)",
        "--server {metrale,vllm,sglang} whose budget: metrale (the reference's ring depth, the "
        "default), or vllm or sglang (which batches of --max-model-len tokens each server "
        "holds; no ring)",
        "--plot FILE also draw the grid into exactly FILE, in its extension's format (PNG "
        "without one; needs matplotlib)",
        "--json one JSON object on stdout",
    ]:
        assert fragment in text
    assert text.endswith(SIZE_EPILOG)


@pytest.mark.parametrize("server", ["vllm", "sglang"])
def test_a_bad_release_is_refused_naming_the_servers_version_flag(
    capsys: pytest.CaptureFixture[str], server: str
) -> None:
    refusal = (
        f"argument --{server}-version: 'bogus' is not a version (e.g. 0.19.1, 0.5.3.post1, "
        "0.20.1rc1.dev91+g1a2b3c)"
    )
    version = (f"--{server}-version", "bogus", "--config", NEMOTRON)
    assert usage_error(capsys, server, *version) == refusal
    # The state laid out as the server lays it, and the plan under the server, say it alike.
    assert usage_error(capsys, "state", "--layout", server, *version) == refusal
    plan = ("plan", "--free", "80GiB", "--weights", "0", "--other", "0", "--server", server)
    assert usage_error(capsys, *plan, *version) == refusal


def test_the_command_lines_names_are_read_through_the_package() -> None:
    # decode_ring.cli hands on app's names when first read: the README's exit statuses (0, 1,
    # 2, 74, 141) and the six commands; any other name is Python's own AttributeError.
    import decode_ring.cli as cli

    statuses = (cli.EXIT_OK, cli.EXIT_REFUSED, cli.EXIT_USAGE, cli.EXIT_IO_ERROR)
    assert (*statuses, cli.EXIT_BROKEN_PIPE) == (0, 1, 2, 74, 141)
    assert list(cli.COMMANDS) == ["decide", "fit", "state", "plan", "vllm", "sglang"]
    with pytest.raises(AttributeError, match=r"^module 'decode_ring\.cli' has no attribute 'x'$"):
        cli.x  # noqa: B018
    assert not hasattr(cli, "run_plan")


@pytest.mark.parametrize("server", ["vllm", "sglang"])
def test_a_server_commands_help_says_what_it_reads(
    capsys: pytest.CaptureFixture[str], server: str
) -> None:
    release = {"vllm": "vLLM", "sglang": "SGLang"}[server]
    status, out, _ = run(capsys, "--help")
    assert status == 0
    # The newest release modelled names the command's line: "vLLM 0.33.0", "SGLang 0.5.23".
    line = rf"{server} what {release} [0-9][0-9.a-z]* reserves for the state, from a launch line's"
    assert re.search(line + " flags", squeeze(out))
    status, out, _ = run(capsys, server, "--help")
    assert status == 0
    assert out.rstrip().endswith("\n\nExit statuses and environment variables: decode-ring --help.")


def test_a_launch_the_server_would_not_boot_is_a_json_error_too(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The l40s (48 GB) cannot hold 44 GiB of weights and vLLM's profile: vLLM's own refusal
    # (vllm/v1/core/kv_cache_utils.py) goes to log_lines, the package's reason to "error".
    qwen3_next = "tests/configs/qwen3-next-80b-a3b-instruct.json"
    argv = ["vllm", "--json", "--gpu", "l40s", "--weights-memory", "44GiB", "serve", qwen3_next]
    status, out, _ = run(capsys, *argv)
    result = json.loads(out)
    assert (status, sorted(result)) == (1, ["error", "log_lines", "status"])
    assert result["error"].startswith("argument --gpu: ")
    assert result["log_lines"][0].startswith("ValueError: No available memory for the cache")


@pytest.mark.parametrize("command", ["fit", "decide", "state"])
def test_a_commands_help_wraps_its_epilog_at_the_terminals_width(
    capsys: pytest.CaptureFixture[str], command: str
) -> None:
    # fit's SIZE paragraph is one sentence of some 330 characters; like every line of the help
    # it is wrapped to the terminal's 100 columns (argparse leaves two), not printed as written.
    status, out, _ = run(capsys, command, "--help")
    assert status == 0
    assert max(len(line) for line in out.splitlines()) <= 98


def test_plan_help_says_what_the_servers_gpu_flags_take(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "plan", "--help")
    assert status == 0
    text = squeeze(out)
    assert (
        "--gpu NAME under --server vllm or sglang: the GPU, as decode-ring vllm --gpu takes it"
        in (text)
    )
    assert "--gpu-memory SIZE under --server: the GPU's total memory --weights SIZE" in text
