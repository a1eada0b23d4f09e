"""The house: each fact stated in one place, functions short enough to read whole, imports that
run down the floors, and a README whose map of the house names files that exist.

These read the package's source (``ast``), never run it: a fact written twice, a family name
spelled in the servers, or an import up the house fails here whatever the numbers say.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "decode_ring"
README = ROOT / "README.md"

# The house is the source tree: where the tests run from a copy beside an installed wheel (the
# wheel matrix), there is no source to read, and the readme run reads it.
pytestmark = pytest.mark.skipif(
    not (ROOT / "setup.py").is_file(), reason="the source tree is not beside the tests"
)

# Functions longer than this (their docstring not counted) are hard to read whole.
LONGEST_BODY = 45
# The reservations are the servers' pipelines: they read as the steps, and no longer.
LONGEST_PIPELINE = 40
# At most three may be longer, each with its reason.
LONG_ALLOWED: dict[tuple[str, str], str] = {}


def sources() -> Iterator[tuple[Path, ast.Module]]:
    """Every Python module of the package, parsed."""
    for path in sorted(PACKAGE.rglob("*.py")):
        yield path, ast.parse(path.read_text(encoding="utf-8"), str(path))


def relative(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def docstrings(tree: ast.Module) -> set[int]:
    """The ids of the string constants that are docstrings."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def code_strings(tree: ast.Module) -> Iterator[ast.Constant]:
    """The string constants of a module that are not docstrings (f-string parts included)."""
    skipped = docstrings(tree)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in skipped
        ):
            yield node


def body_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """A function's lines, less its docstring."""
    body = node.body
    first = body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
        body = body[1:]
    if not body:
        return 0
    end = body[-1].end_lineno
    assert end is not None
    return end - body[0].lineno + 1


# --- one fact, one place ------------------------------------------------------------------


def test_each_server_release_is_stated_once() -> None:
    release = re.compile(r"\b0\.33(\.0)?\b|\b0\.5\.23\b")
    stated = [
        f"{relative(path)}:{node.lineno}"
        for path, tree in sources()
        for node in code_strings(tree)
        if release.search(str(node.value))
    ]
    # The releases package states every modelled release, in its list and in the release each
    # rule changed at; the newest is named nowhere else.
    assert all(place.startswith("decode_ring/releases/") for place in stated), stated


def test_dtype_sizes_are_one_table() -> None:
    tables = []
    for path, tree in sources():
        for node in ast.walk(tree):
            if isinstance(node, ast.Dict):
                keys = {key.value for key in node.keys if isinstance(key, ast.Constant)}
                sizes = all(
                    isinstance(value, ast.Constant) and isinstance(value.value, int)
                    for value in node.values
                )
                if {"bfloat16", "float32"} <= keys and sizes:
                    tables.append(f"{relative(path)}:{node.lineno}")
            if isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any(isinstance(t, ast.Name) and t.id.endswith("DTYPE_BYTES") for t in targets):
                    tables.append(f"{relative(path)}:{node.lineno} (a DTYPE_BYTES)")
    assert len(tables) == 2, tables  # the table and its name, in one statement of one module
    assert {place.split(":")[0] for place in tables} == {"decode_ring/models/dtypes.py"}


def test_kv_bytes_per_token_is_one_method_of_the_attention_side() -> None:
    # The KV heads per rank, the latent's widths and the indexer's keys are read where the
    # attention side computes its bytes per token (and where it is read from a config).
    owners = {"decode_ring/models/state.py", "decode_ring/models/attention.py"}
    geometry = {"num_key_value_heads", "kv_lora_rank", "qk_rope_head_dim", "v_head_dim"}
    readers = sorted(
        f"{relative(path)}:{node.lineno} .{node.attr}"
        for path, tree in sources()
        if relative(path) not in owners
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr in geometry
    )
    assert readers == []
    methods = [
        node.name
        for path, tree in sources()
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef) and "bytes_per_token" in node.name
    ]
    assert sorted(methods) == ["bytes_per_token", "kv_bytes_per_token", "page_bytes_per_token"]


def test_a_value_is_made_printable_in_one_place() -> None:
    helpers = {"show", "_show", "quoted", "kind_name", "_kind", "type_name", "shown"}
    defined = [
        f"{relative(path)}:{node.name}"
        for path, tree in sources()
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef) and node.name in helpers
    ]
    assert defined == ["decode_ring/printable.py:show", "decode_ring/printable.py:type_name"]


def test_the_text_config_is_found_in_one_place() -> None:
    users = sorted(
        {
            relative(path)
            for path, tree in sources()
            for node in ast.walk(tree)
            if isinstance(node, ast.Name) and node.id == "WRAPPERS"
        }
    )
    assert users == ["decode_ring/models/loading.py", "decode_ring/models/read.py"]


def test_the_servers_never_branch_on_a_family_or_a_kind() -> None:
    from decode_ring.models import FAMILIES, KINDS

    names = set(FAMILIES) | set(KINDS)
    found = []
    for path, tree in sources():
        if not relative(path).startswith("decode_ring/servers/"):
            continue
        for node in ast.walk(tree):
            # A set of family or kind names, or a family or kind compared with anything.
            if isinstance(node, ast.Set) and any(
                isinstance(item, ast.Constant) and item.value in names for item in node.elts
            ):
                found.append(f"{relative(path)}:{node.lineno} a set of names")
            if isinstance(node, ast.Compare):
                sides = (node.left, *node.comparators)
                if any(
                    isinstance(side, ast.Attribute) and side.attr in ("family", "kind")
                    for side in sides
                ):
                    found.append(f"{relative(path)}:{node.lineno} compares a family or a kind")
    assert found == []


# --- short functions ----------------------------------------------------------------------


def test_no_function_is_longer_than_a_reader_holds() -> None:
    assert len(LONG_ALLOWED) <= 3
    long = {
        (relative(path), node.name): body_lines(node)
        for path, tree in sources()
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and body_lines(node) > LONGEST_BODY
    }
    assert set(long) <= set(LONG_ALLOWED), long


def test_no_compiled_function_is_longer_than_a_reader_holds() -> None:
    lines = (PACKAGE / "_core.pyx").read_text(encoding="utf-8").split("\n")
    start = re.compile(r"^(\s*)(?:c?p?def)\s+(?:inline\s+)?[^=(]*?(\w+)\s*\(")
    long = {}
    for index, line in enumerate(lines):
        match = start.match(line)
        if match is None:
            continue
        indent = len(match.group(1))
        header_end = index
        while not lines[header_end].rstrip().endswith(":"):
            header_end += 1
        body = []
        for following in lines[header_end + 1 :]:
            if following.strip() and len(following) - len(following.lstrip()) <= indent:
                break
            body.append(following)
        text = "\n".join(body).strip()
        if text.startswith('"""'):
            text = text[text.index('"""', 3) + 3 :].strip()
        if text.count("\n") + 1 > LONGEST_BODY:
            long[match.group(2)] = text.count("\n") + 1
    assert long == {}


@pytest.mark.parametrize(
    ("module", "pipeline"),
    [("servers/vllm.py", "vllm_reservation"), ("servers/sglang.py", "sglang_reservation")],
)
def test_each_reservation_reads_as_the_servers_steps(module: str, pipeline: str) -> None:
    tree = ast.parse((PACKAGE / module).read_text(encoding="utf-8"))
    function = next(
        node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == pipeline
    )
    assert body_lines(function) <= LONGEST_PIPELINE


# --- imports run down the house -----------------------------------------------------------

# Each module's floor; a module imports only from lower floors, or from its own package. The
# package's root (``decode_ring/__init__.py``, the public names) and ``__main__`` stand apart.
FLOORS = {
    "printable": 0,
    # Below the library, over printable (which its messages quote through).
    "releases": 0.5,
    "gpus": 1,
    "_usize_py": 0,
    "_core_py": 1,
    "_core": 1,
    "_selector": 2,
    "_facade": 3,
    "units": 1,
    "models": 1,
    "preflight": 4,
    "snapshots": 2,
    "checkpoints": 2,
    "workers": 5,
    "distributed": 5,
    "servers": 5,
    "reports": 5,
    "plan": 6,
    "cli": 7,
}
# Imported inside a function on purpose: optional extras, the core the selector chooses, and
# the command line's commands (``cli.main`` loads them, so that Ctrl-C then exits quietly).
DEFERRED = {"matplotlib", "torch", "huggingface_hub", "pynvml", "yaml", "_core", "_core_py", "app"}


def top_module(path: Path) -> str:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return parts[0]


def imported(path: Path, node: ast.Import | ast.ImportFrom) -> list[str]:
    """The package modules (first part below ``decode_ring``) an import statement names."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
        return [name.split(".")[1] for name in names if name.startswith("decode_ring.")]
    if node.level == 0:
        module = node.module or ""
        if module == "decode_ring":
            return [alias.name for alias in node.names]
        return [module.split(".")[1]] if module.startswith("decode_ring.") else []
    package = path.relative_to(PACKAGE).parent.parts
    if path.name == "__init__.py":
        package = (*package,)
    base = package[: len(package) - (node.level - 1)]
    target = (*base, *(node.module or "").split(".")) if node.module else base
    target = tuple(part for part in target if part)
    if target:
        return [target[0]]
    return [alias.name for alias in node.names]


def test_imports_run_down_the_house() -> None:
    upward = []
    for path, tree in sources():
        here = top_module(path)
        if here in ("__init__", "__main__"):
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            for target in imported(path, node):
                if target in ("__init__", here) or target not in FLOORS:
                    continue
                if FLOORS[target] >= FLOORS[here]:
                    upward.append(f"{relative(path)}:{node.lineno} imports {target}")
    assert upward == []


def test_the_library_never_imports_the_command_line() -> None:
    found = [
        f"{relative(path)}:{node.lineno}"
        for path, tree in sources()
        if top_module(path) not in ("cli", "__main__")
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom) and "cli" in imported(path, node)
    ]
    assert found == []


def test_no_function_hides_a_dependency_in_a_local_import() -> None:
    hidden = []
    for path, tree in sources():
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(function):
                if isinstance(node, ast.Import):
                    names = [alias.name.split(".")[0] for alias in node.names]
                elif isinstance(node, ast.ImportFrom):
                    names = [(node.module or node.names[0].name).split(".")[0]]
                else:
                    continue
                hidden += [
                    f"{relative(path)}:{node.lineno} {name}"
                    for name in names
                    if name not in DEFERRED
                ]
    assert hidden == []


def test_render_is_complete_when_imported() -> None:
    import subprocess
    import sys

    # A fresh interpreter: importing the renderers alone must register every value's.
    code = (
        "from decode_ring.cli.render import render\n"
        "from decode_ring.servers import vllm_reservation, sglang_reservation\n"
        "c = 'tests/configs/nemotron-nano-9b-v2.json'\n"
        "print(render(vllm_reservation(c)).lines[0])\n"
        "print(render(sglang_reservation(c, available_memory=60 * 2**30)).lines[0])\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert run.stdout.splitlines() == [
        "vLLM 0.33.0 reserves for nemotron_h (nemotron_h), per rank, tp rank 1 of 1",
        "SGLang 0.5.23 reserves for nemotron_h (nemotron_h, NemotronHForCausalLM), per rank, "
        "tp rank 1 of 1",
    ]


# --- the README's map of the house --------------------------------------------------------


def readme_section(title: str) -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index(title)
    end = text.find("\n## ", start + len(title))
    return text[start : end if end != -1 else len(text)]


def test_the_design_table_names_files_that_exist() -> None:
    design = readme_section("## Design")
    named = re.findall(r"`((?:decode_ring|tests|benchmarks|tools|\.ci)/[^`\s]*)`", design)
    assert len(named) >= 20
    # A pattern such as tests/test_cli_<command>.py names a kind of file, not one file.
    missing = [n for n in named if "<" not in n and not (ROOT / n.rstrip("/")).exists()]
    assert missing == []


def test_the_design_table_names_every_module_of_the_package() -> None:
    design = readme_section("## Design")
    names = [relative(path) for path in PACKAGE.glob("*.py") if path.name != "__main__.py"]
    names += [relative(path) + "/" for path in PACKAGE.iterdir() if (path / "__init__.py").exists()]
    assert [name for name in sorted(names) if f"`{name}`" not in design] == []
