"""Each modelled release's flags, ``decode_ring/cli/flags/<server>-releases.json`` (issue 26).

Always: the compact file is well formed, lists exactly the modelled releases, agrees with the
full list of the release the package mirrors (``vllm-0.33.0.json``, ``sglang-0.5.23.json``), and
gives the ranges the releases' own code shows (each expectation cites the release tree's
file:line); ``known_flags`` refuses a release the file does not list. With the releases'
extracted trees at hand (a folder of ``<server>-<version>/`` trees named by
``DECODE_RING_TREES``, e.g. ``/work/peer_cache``): ``tools/server-flags --releases --check``
regenerates both files unchanged.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from decode_ring.cli.known_flags import (
    UnknownRelease,
    covered_releases,
    flag_releases,
    known_flags,
)
from decode_ring.releases import SGLANG, VLLM, Release

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "tools" / "server-flags"
# The installed package's data (the wheel matrix runs these tests beside an installed wheel).
FLAGS = Path(str(resources.files("decode_ring.cli").joinpath("flags")))
TREES = "DECODE_RING_TREES"


def listed(text: str) -> tuple[str, ...]:
    """The versions of a space-separated list, in its order."""
    return tuple(text.split())


VLLM_RELEASES = listed(
    "0.10.2 0.11.0 0.11.1 0.11.2 0.12.0 0.13.0 0.14.0 0.14.1 0.15.0 0.15.1 0.16.0 0.17.0 "
    "0.17.1 0.18.0 0.18.1 0.19.0 0.19.1 0.20.0 0.20.1 0.20.2 0.21.0 0.22.0 0.22.1 0.23.0 "
    "0.24.0 0.25.0 0.25.1 0.26.0 0.27.0 0.27.1 0.28.0 0.29.0 0.30.0 0.31.0 0.32.0 0.33.0"
)
# Every SGLang 0.5 release with hybrid (Mamba) support, posts included: 0.5.1.post3 and 0.4.x
# have none and are not modelled.
SGLANG_RELEASES = listed(
    "0.5.2 0.5.3 0.5.3.post1 0.5.3.post2 0.5.3.post3 0.5.4 0.5.4.post1 0.5.4.post2 0.5.4.post3 "
    "0.5.5 0.5.5.post1 0.5.5.post2 0.5.5.post3 0.5.6 0.5.6.post1 0.5.6.post2 0.5.7 0.5.8 "
    "0.5.8.post1 0.5.9 0.5.10 0.5.10.post1 0.5.11 0.5.12 0.5.12.post1 0.5.13 0.5.13.post1 "
    "0.5.14 0.5.15 0.5.15.post1 0.5.16 0.5.17 0.5.18 0.5.19 0.5.20 0.5.21 0.5.22 0.5.23"
)
MODELLED = {"vLLM": VLLM_RELEASES, "SGLang": SGLANG_RELEASES}

# (server, spelling): its ranges, from the releases' own code (paths are in the release's tree,
# /work/peer_cache/<server>-<version>/).
EXPECTED: dict[tuple[str, str], tuple[tuple[str, str], ...]] = {
    # vllm-0.27.0: vllm/config/cache.py:152 (CacheConfig.use_replayssm),
    # vllm/engine/arg_utils.py:1244 (cache_group.add_argument("--use-replayssm", ...), a
    # BooleanOptionalAction); no "replayssm" anywhere in vllm-0.26.0/vllm.
    ("vLLM", "--use-replayssm"): (("0.27.0", "0.33.0"),),
    ("vLLM", "--no-use-replayssm"): (("0.27.0", "0.33.0"),),
    ("vLLM", "--replayssm-buffer-len"): (("0.27.0", "0.33.0"),),
    # vllm-0.15.0: vllm/config/cache.py:127, vllm/engine/arg_utils.py:945; no mamba_cache_mode
    # in vllm-0.14.1/vllm.
    ("vLLM", "--mamba-cache-mode"): (("0.15.0", "0.33.0"),),
    # vllm-0.10.2: vllm/config/cache.py:95, vllm/engine/arg_utils.py:761 and :763.
    ("vLLM", "--mamba-ssm-cache-dtype"): (("0.10.2", "0.33.0"),),
    ("vLLM", "--mamba-cache-dtype"): (("0.10.2", "0.33.0"),),
    # vllm-0.22.0: vllm/engine/arg_utils.py:1466; vllm-0.21.0's arg_utils.py has no spec-tokens.
    ("vLLM", "--spec-tokens"): (("0.22.0", "0.33.0"),),
    # Its own flag up to 0.16.0 (vllm-0.10.2: vllm/engine/arg_utils.py:1783; vllm-0.16.0:
    # :2088), gone from 0.17.0, and back in 0.33.0 as the --disable- inverse of
    # --enable-log-requests (vllm-0.33.0: vllm/engine/arg_utils.py:3260, EnableDisableAction of
    # vllm/utils/argparse_utils.py:120).
    ("vLLM", "--disable-log-requests"): (("0.10.2", "0.16.0"), ("0.33.0", "0.33.0")),
    ("vLLM", "--no-such-flag"): (),
    # sglang-0.5.2: sglang/srt/server_args.py:1727 and :1733.
    ("SGLang", "--max-mamba-cache-size"): (("0.5.2", "0.5.23"),),
    ("SGLang", "--mamba-ssm-dtype"): (("0.5.2", "0.5.23"),),
    # sglang-0.5.3.post2: sglang/srt/server_args.py:2482; not in 0.5.3.post1's.
    ("SGLang", "--mamba-full-memory-ratio"): (("0.5.3.post2", "0.5.23"),),
    # sglang-0.5.7: sglang/srt/server_args.py:3671 to sglang-0.5.19: :3920 (from 0.5.14 a
    # deprecated alias of --mamba-radix-cache-strategy); nowhere in sglang-0.5.20/sglang/srt.
    ("SGLang", "--mamba-scheduler-strategy"): (("0.5.7", "0.5.19"),),
    # sglang-0.5.14: sglang/srt/server_args.py:1731 (the A[...] field mamba_radix_cache_strategy).
    ("SGLang", "--mamba-radix-cache-strategy"): (("0.5.14", "0.5.23"),),
    # sglang-0.5.9: sglang/srt/server_args.py:4329; not in 0.5.10's or 0.5.11's; back in
    # sglang-0.5.12: :6314.
    ("SGLang", "--hierarchical-sparse-attention-extra-config"): (
        ("0.5.8", "0.5.9"),
        ("0.5.12", "0.5.23"),
    ),
}


def compact(server: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        (FLAGS / f"{server.lower()}-releases.json").read_text(encoding="utf-8")
    )
    return data


def full_spellings(name: str) -> frozenset[str]:
    data = json.loads((FLAGS / name).read_text(encoding="utf-8"))
    return frozenset(s for entry in data["flags"] for s in (entry["flag"], *entry["aliases"]))


@pytest.mark.parametrize("server", ["vLLM", "SGLang"])
def test_the_compact_file_lists_the_modelled_releases_in_order(server: str) -> None:
    data = compact(server)
    assert list(data) == ["server", "generated_by", "releases", "flags", "older"]
    assert data["server"] == server.lower()
    assert data["generated_by"] == "tools/server-flags"
    assert tuple(data["releases"]) == MODELLED[server] == covered_releases(server)


@pytest.mark.parametrize("server", ["vLLM", "SGLang"])
def test_each_spelling_has_maximal_ordered_ranges(server: str) -> None:
    data = compact(server)
    order = {version: index for index, version in enumerate(data["releases"])}
    spellings = list(data["flags"])
    assert spellings == sorted(spellings)
    for spelling, spans in data["flags"].items():
        assert spelling.startswith("-") and spelling.strip() == spelling, spelling
        assert spans, spelling
        previous = -2
        for first, last in spans:
            # In order, none empty, none touching the one before (they would be one range).
            assert previous + 1 < order[first] <= order[last], (spelling, spans)
            previous = order[last]


@pytest.mark.parametrize(
    ("release", "full"),
    [(VLLM, "vllm-0.33.0.json"), (SGLANG, "sglang-0.5.23.json")],
    ids=["vllm", "sglang"],
)
def test_the_compact_file_agrees_with_the_full_list(release: Release, full: str) -> None:
    assert known_flags(release) == full_spellings(full)


@pytest.mark.parametrize(("server", "spelling"), list(EXPECTED), ids="{0[0]}{0[1]}".format)
def test_a_flag_is_in_the_releases_whose_code_defines_it(server: str, spelling: str) -> None:
    spans = EXPECTED[server, spelling]
    assert flag_releases(server, spelling) == spans
    releases = MODELLED[server]
    for index, version in enumerate(releases):
        inside = any(
            releases.index(first) <= index <= releases.index(last) for first, last in spans
        )
        assert (spelling in known_flags(Release(server, version))) == inside, version


def test_the_release_the_package_mirrors_is_the_newest_listed() -> None:
    assert covered_releases("vLLM")[-1] == VLLM.version
    assert covered_releases("SGLang")[-1] == SGLANG.version


@pytest.mark.parametrize(
    "release",
    [
        Release("vLLM", "0.10.1"),
        Release("vLLM", "0.34.0"),
        Release("vLLM", "0.33"),
        Release("SGLang", "0.5.1.post3"),
        Release("SGLang", "0.4.10.post2"),
        Release("TGI", "3.0.0"),
        Release("../vLLM", "0.33.0"),
    ],
    ids=str,
)
def test_a_release_the_file_does_not_list_is_refused(release: Release) -> None:
    with pytest.raises(UnknownRelease) as raised:
        known_flags(release)
    assert isinstance(raised.value, ValueError) and not isinstance(raised.value, KeyError)
    assert release.version in str(raised.value) or release.server in str(raised.value)


@pytest.mark.parametrize(
    ("release", "listed"),
    [
        (Release("vLLM", "0.9.2"), "the listed vLLM releases are 0.10.2 to 0.33.0 (36 of them)"),
        (Release("SGLang", "0.5.1"), "the listed SGLang releases are 0.5.2 to 0.5.23 (38 of them)"),
    ],
    ids=str,
)
def test_a_release_not_listed_is_refused_naming_the_listed_span(
    release: Release, listed: str
) -> None:
    # The generated files list vLLM 0.10.2 to 0.33.0 and SGLang 0.5.2 to 0.5.23 (every
    # release and post-release between, RELEASES.md).
    with pytest.raises(UnknownRelease) as raised:
        known_flags(release)
    assert str(raised.value) == f"no flag list for {release}: {listed}"


def test_a_server_without_lists_is_refused_by_flag_releases() -> None:
    with pytest.raises(UnknownRelease):
        flag_releases("TGI", "--port")


@pytest.mark.parametrize("server", ["vllm", "sglang"])
def test_the_script_regenerates_the_compact_file_from_the_trees(server: str) -> None:
    folder = os.environ.get(TREES)
    if not folder:
        pytest.skip(f"{TREES} is not set: no extracted releases to regenerate the data from")
    if not SCRIPT.is_file():
        pytest.skip("tools/server-flags is not beside the tests")  # pragma: no cover
    releases = compact(server)["releases"]
    trees = [Path(folder) / f"{server}-{version}" for version in releases]
    missing = [tree.name for tree in trees if not tree.is_dir()]
    if missing:
        pytest.skip(f"not in {TREES}={folder}: {', '.join(missing)}")
    completed = subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--releases",
            "--check",
            "--out",
            str(FLAGS),
            *map(str, trees),
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert completed.returncode == 0, completed.stdout[-20_000:] + completed.stderr[-5_000:]
