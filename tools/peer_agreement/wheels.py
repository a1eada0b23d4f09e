"""Run the servers' own Python from their released wheels, on a CPU, with torch stubbed.

Nothing of vLLM's or SGLang's is copied into this repository. ``unpack`` extracts the ``.py``
files of a wheel into a cache directory at run time; ``PeerRuntime`` then imports modules from
there through an import hook that

* runs a **whole module** from the wheel when it is listed in ``real`` (for example
  ``vllm/model_executor/layers/mamba/mamba_utils.py``),
* builds a **partial module** from chosen top-level definitions of a wheel file, executed from the
  file's own AST (``partial``: for example ``divide`` from ``vllm/distributed/utils.py``),
* serves a **stub** written here where the peer reads process state (environment, parallel
  groups), each documented where it is made, and
* serves a permissive placeholder (``Stub``) for anything else a module imports but the
  functions run here never call. The placeholders a run touched are listed by ``touched_stubs``.

A package's ``__init__.py`` is never run: packages are bare namespaces over the wheel's folders,
so importing one module does not drag in the server.

``extract_class`` AST-extracts chosen methods of a class from a file that does not import as a
whole (a model file), keeping their source and line numbers, and executes them in a namespace
made of the file's own imports. Each extraction records ``path:line`` so that the reports can
cite what ran.

The wheels: ``pip download --no-deps -d WHEELS vllm==0.33.0 sglang==0.5.23``.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import math
import os
import sys
import tempfile
import types
import zipfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "FakeDtype",
    "PeerRuntime",
    "Stub",
    "Wheels",
    "extract_class",
    "fake_torch",
    "find_wheels",
    "unpack",
]

DOWNLOAD_HINT = "pip download --no-deps -d WHEELS vllm==0.33.0 sglang==0.5.23"


# --- the wheels ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Wheels:
    """The two wheels' unpacked roots: ``vllm`` holds ``vllm/...``, ``sglang`` holds
    ``sglang/...``; ``names`` are the wheel file names, for the reports."""

    vllm: Path
    sglang: Path
    names: tuple[str, str]


def find_wheels(given: Sequence[str | os.PathLike[str]]) -> tuple[Path, Path]:
    """The vLLM and SGLang wheel files among ``given`` (wheel files or folders holding them).

    Raises ``FileNotFoundError`` naming the missing one and how to download it."""
    found: dict[str, Path] = {}
    for item in given:
        path = Path(item)
        candidates = sorted(path.glob("*.whl")) if path.is_dir() else [path]
        for wheel in candidates:
            for project in ("vllm", "sglang"):
                if wheel.name.startswith(f"{project}-") and wheel.suffix == ".whl":
                    found.setdefault(project, wheel)
    missing = [project for project in ("vllm", "sglang") if project not in found]
    if missing:
        raise FileNotFoundError(
            f"no {' or '.join(missing)} wheel in {', '.join(map(str, given))}; "
            f"download them with: {DOWNLOAD_HINT}"
        )
    return found["vllm"], found["sglang"]


def default_cache() -> Path:
    """Where wheels are unpacked: ``$PEER_AGREEMENT_CACHE`` or a folder in the temp dir."""
    configured = os.environ.get("PEER_AGREEMENT_CACHE")
    return Path(configured) if configured else Path(tempfile.gettempdir()) / "peer_agreement"


def unpack(wheel: Path, cache: Path | None = None) -> Path:
    """Extract the ``.py`` files of ``wheel`` under the cache (once per wheel content) and return
    the folder that holds its top-level packages. Only Python sources are extracted."""
    cache = default_cache() if cache is None else cache
    stat = wheel.stat()
    key = hashlib.sha256(f"{wheel.name}:{stat.st_size}:{stat.st_mtime_ns}".encode()).hexdigest()
    root = cache / f"{wheel.stem}-{key[:12]}"
    done = root / ".unpacked"
    if not done.exists():
        root.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(wheel) as archive:
            for member in archive.namelist():
                if member.endswith(".py") and not member.startswith(("/", "..")):
                    archive.extract(member, root)
        done.write_text(wheel.name, encoding="utf-8")
    return root


def open_wheels(given: Sequence[str | os.PathLike[str]], cache: Path | None = None) -> Wheels:
    """Find and unpack both wheels."""
    vllm, sglang = find_wheels(given)
    return Wheels(unpack(vllm, cache), unpack(sglang, cache), (vllm.name, sglang.name))


# --- placeholders --------------------------------------------------------------------------------


class _StubMeta(type):
    def __getattr__(cls, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return Stub

    def __getitem__(cls, item: object) -> Any:
        return Stub

    def __setitem__(cls, item: object, value: object) -> None:
        pass

    def __iter__(cls) -> Iterator[Any]:
        # Without it, ``in`` and ``for`` would index the class 0, 1, 2, ... through
        # ``__getitem__`` forever; an instance iterates as empty, and so does the class.
        return iter(())

    def __or__(cls, other: object) -> Any:
        return Stub

    def __ror__(cls, other: object) -> Any:
        return Stub

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        # A decorator used bare (``@stub``) gets the function back.
        if len(args) == 1 and not kwargs and callable(args[0]) and cls is Stub:
            return args[0]
        return super().__call__(*args, **kwargs)


class Stub(metaclass=_StubMeta):
    """A placeholder for whatever a peer module imports but the functions run here never use:
    any attribute, call, subscript or subclass of it works, and a decorator made from it
    returns the function unchanged. A computation that really reads one produces a ``Stub``,
    which the comparisons report as a disagreement rather than a number."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __init_subclass__(cls, **kwargs: Any) -> None:
        pass

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return Stub()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if len(args) == 1 and not kwargs and callable(args[0]):
            return args[0]
        return Stub()

    def __getitem__(self, item: object) -> Any:
        return Stub()

    def __setitem__(self, item: object, value: object) -> None:
        pass

    def __delattr__(self, name: str) -> None:
        pass

    def __iter__(self) -> Iterator[Any]:
        return iter(())

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def __repr__(self) -> str:
        return "<Stub>"


class StubModule(types.ModuleType):
    """A module whose every missing attribute is ``Stub``; it records that it was used."""

    def __init__(self, name: str, touched: set[str]) -> None:
        super().__init__(name)
        self.__path__: list[str] = []
        self._touched = touched

    def __getattr__(self, attribute: str) -> Any:
        if attribute.startswith("__") and attribute.endswith("__"):
            raise AttributeError(attribute)
        self._touched.add(f"{self.__name__}.{attribute}")
        return Stub


class PackageModule(StubModule):
    """A wheel package whose ``__init__`` is not run: a submodule is imported on attribute
    access, any other name is ``Stub`` (so ``from package import Name`` of a name its
    ``__init__`` would have re-exported is a placeholder, not a failed import)."""

    def __getattr__(self, attribute: str) -> Any:
        if attribute.startswith("__") and attribute.endswith("__"):
            raise AttributeError(attribute)
        folder = Path(self.__path__[0])
        if (folder / f"{attribute}.py").is_file() or (folder / attribute).is_dir():
            return importlib.import_module(f"{self.__name__}.{attribute}")
        return super().__getattr__(attribute)


# --- a fake torch --------------------------------------------------------------------------------


class FakeDtype:
    """A torch dtype as far as sizing code uses one: a name and an ``itemsize``."""

    __slots__ = ("is_floating_point", "itemsize", "name")

    def __init__(self, name: str, itemsize: int, is_floating_point: bool) -> None:
        self.name = name
        self.itemsize = itemsize
        self.is_floating_point = is_floating_point

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    def __reduce__(self) -> tuple[Any, ...]:
        return (FakeDtype, (self.name, self.itemsize, self.is_floating_point))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FakeDtype) and other.name == self.name

    def __hash__(self) -> int:
        return hash(self.name)


# (name, itemsize, floating, aliases): torch's own sizes.
_DTYPES = (
    ("float32", 4, True, ("float",)),
    ("float64", 8, True, ("double",)),
    ("float16", 2, True, ("half",)),
    ("bfloat16", 2, True, ()),
    ("float8_e4m3fn", 1, True, ()),
    ("float8_e4m3fnuz", 1, True, ()),
    ("float8_e5m2", 1, True, ()),
    ("float8_e5m2fnuz", 1, True, ()),
    ("float8_e8m0fnu", 1, True, ()),
    ("float4_e2m1fn_x2", 1, True, ()),
    ("uint8", 1, False, ()),
    ("int8", 1, False, ()),
    ("int16", 2, False, ("short",)),
    ("int32", 4, False, ("int",)),
    ("int64", 8, False, ("long",)),
    ("bool", 1, False, ()),
)


@dataclass
class FakeTensor:
    """What ``torch.zeros``/``empty``/``tensor`` return: a shape and a dtype, no data."""

    shape: tuple[int, ...]
    dtype: FakeDtype
    device: object = None

    def element_size(self) -> int:
        return self.dtype.itemsize

    def numel(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return self.numel() * self.dtype.itemsize

    def size(self, dim: int | None = None) -> Any:
        return self.shape if dim is None else self.shape[dim]

    def __getattr__(self, name: str) -> Any:
        return Stub()


@dataclass
class Allocations:
    """Every tensor the fake torch made, in order."""

    tensors: list[FakeTensor] = field(default_factory=list)

    def clear(self) -> None:
        self.tensors.clear()


def _shape_of(args: Sequence[Any], kwargs: Mapping[str, Any]) -> tuple[int, ...]:
    size = kwargs.get("size", args)
    if len(size) == 1 and isinstance(size[0], list | tuple):
        size = size[0]
    return tuple(int(dim) for dim in size)


def fake_torch(allocations: Allocations, touched: set[str]) -> StubModule:
    """A ``torch`` module for sizing code: dtypes with ``itemsize``, ``torch.dtype`` for
    ``isinstance``, and ``zeros``/``empty``/``ones``/``full``/``tensor`` that record the shape
    and dtype of what they would allocate in ``allocations``. Everything else is ``Stub``."""
    torch = StubModule("torch", touched)
    torch.dtype = FakeDtype  # type: ignore[attr-defined]
    torch.Tensor = FakeTensor  # type: ignore[attr-defined]
    torch.Size = tuple  # type: ignore[attr-defined]
    torch.__version__ = "2.13.0+fake"  # type: ignore[attr-defined]
    for name, itemsize, floating, aliases in _DTYPES:
        dtype = FakeDtype(name, itemsize, floating)
        for alias in (name, *aliases):
            setattr(torch, alias, dtype)
    float32 = FakeDtype("float32", 4, True)

    def allocate(*args: Any, **kwargs: Any) -> FakeTensor:
        dtype = kwargs.get("dtype") or float32
        tensor = FakeTensor(_shape_of(args, kwargs), dtype, kwargs.get("device"))
        allocations.tensors.append(tensor)
        return tensor

    def from_data(data: Any, *args: Any, **kwargs: Any) -> FakeTensor:
        dtype = kwargs.get("dtype") or float32
        length = len(data) if isinstance(data, list | tuple) else 1
        return FakeTensor((length,), dtype)

    for name in ("zeros", "empty", "ones", "full"):
        setattr(torch, name, allocate)
    torch.tensor = from_data  # type: ignore[attr-defined]
    torch.finfo = lambda dtype: types.SimpleNamespace(bits=8 * dtype.itemsize)  # type: ignore[attr-defined]
    return torch


# --- the import hook -----------------------------------------------------------------------------


@dataclass
class _Source:
    path: Path
    keep: tuple[str, ...] | None  # None: the whole module


class _ModuleLoader(importlib.abc.Loader):
    def __init__(self, runtime: PeerRuntime, name: str) -> None:
        self.runtime = runtime
        self.name = name

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return self.runtime.make_module(self.name)

    def exec_module(self, module: types.ModuleType) -> None:
        self.runtime.fill_module(self.name, module)


class PeerRuntime(importlib.abc.MetaPathFinder):
    """The import hook and namespace for one run of peer code.

    ``roots`` maps a top-level package (``vllm``, ``sglang``) to the folder that holds it.
    ``real`` names modules run whole from the wheel; ``partial`` maps a module name to the
    top-level names kept from its file; ``stubs`` maps a module name to a ready module.
    Anything else under a root, and every module of ``stubbed_roots`` (``torch``,
    ``transformers``, ...), is a ``StubModule``. Use as a context manager: it installs a fake
    ``torch`` and removes every module it served when it exits."""

    def __init__(
        self,
        roots: Mapping[str, Path],
        *,
        real: Sequence[str] = (),
        partial: Mapping[str, tuple[str | None, Sequence[str]]] | None = None,
        stubs: Mapping[str, types.ModuleType] | None = None,
        stubbed_roots: Sequence[str] = (),
        real_prefixes: Sequence[str] = (),
    ) -> None:
        self.roots = dict(roots)
        self.real = set(real)
        self.partial = {name: (file, tuple(keep)) for name, (file, keep) in (partial or {}).items()}
        self.stubs = dict(stubs or {})
        self.stubbed_roots = set(stubbed_roots) | {"torch"}
        self.real_prefixes = tuple(real_prefixes)
        self.touched: set[str] = set()
        self.allocations = Allocations()
        self.torch = fake_torch(self.allocations, self.touched)
        self._served: list[str] = []
        self._saved: dict[str, types.ModuleType] = {}

    # context management

    def __enter__(self) -> PeerRuntime:
        for name in list(sys.modules):
            top = name.split(".")[0]
            if top in self.roots or top in self.stubbed_roots:
                self._saved[name] = sys.modules.pop(name)
        sys.modules["torch"] = self.torch
        self._served.append("torch")
        sys.meta_path.insert(0, self)
        return self

    def __exit__(self, *exc: object) -> None:
        sys.meta_path.remove(self)
        for name in self._served:
            sys.modules.pop(name, None)
        for name in list(sys.modules):
            top = name.split(".")[0]
            if top in self.roots or top in self.stubbed_roots:
                del sys.modules[name]
        sys.modules.update(self._saved)

    # the finder

    def _file(self, name: str) -> tuple[Path | None, bool]:
        """(the wheel file or folder for ``name``, whether it is a package)."""
        parts = name.split(".")
        root = self.roots.get(parts[0])
        if root is None:
            return None, False
        base = root.joinpath(*parts)
        if base.is_dir():
            return base, True
        module = base.with_suffix(".py")
        return (module, False) if module.is_file() else (None, False)

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        top = fullname.split(".")[0]
        if top not in self.roots and top not in self.stubbed_roots:
            return None
        location, is_package = self._file(fullname)
        spec = importlib.machinery.ModuleSpec(
            fullname, _ModuleLoader(self, fullname), is_package=is_package
        )
        if location is not None:
            spec.origin = str(location)
        return spec

    def make_module(self, name: str) -> types.ModuleType:
        self._served.append(name)
        if name in self.stubs:
            return self.stubs[name]
        location, is_package = self._file(name)
        if location is not None and self.is_real(name, is_package):
            # Names the file does not define resolve to placeholders, so that one missing
            # helper in a ``from m import a, b`` does not fail the whole import.
            module = StubModule(name, self.touched)
            module.__file__ = str(location)
            if is_package:
                module.__path__ = [str(location)]
            return module
        if location is not None and is_package:
            package = PackageModule(name, self.touched)
            package.__path__ = [str(location)]
            return package
        self.touched.add(name)
        return StubModule(name, self.touched)

    def fill_module(self, name: str, module: types.ModuleType) -> None:
        location, _ = self._file(name)
        if location is None or name in self.stubs:
            return
        if self.is_real(name, location.is_dir()) and name not in self.partial:
            if location.is_dir():
                location = location / "__init__.py"
            code = compile(location.read_text(encoding="utf-8"), str(location), "exec")
            exec(code, module.__dict__)
        elif name in self.partial:
            file, keep = self.partial[name]
            source = location if file is None else self.roots[name.split(".")[0]] / file
            module.__file__ = str(source)
            exec_partial(source, keep, module.__dict__)

    def is_real(self, name: str, is_package: bool) -> bool:
        """Whether ``name`` runs from the wheel (whole or partial)."""
        if name in self.real or name in self.partial:
            return True
        return not is_package and name.startswith(self.real_prefixes)

    # helpers for callers

    def import_module(self, name: str) -> types.ModuleType:
        """Import ``name`` through this runtime (it must be entered)."""
        return importlib.import_module(name)

    def relative(self, path: Path) -> str:
        """``path`` as a wheel-relative path (``vllm/...``) for citations."""
        for root in self.roots.values():
            with contextlib.suppress(ValueError):
                return str(path.relative_to(root))
        return str(path)


def exec_partial(path: Path, keep: Sequence[str], namespace: dict[str, Any]) -> None:
    """Execute, from ``path``'s AST, its imports (each on its own; one that fails binds its
    names to ``Stub``) and the top-level definitions and assignments named in ``keep``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    namespace.setdefault("__name__", path.stem)
    namespace.setdefault("logger", Stub())
    _exec_imports(tree, path, namespace)
    wanted = set(keep)
    body = [node for node in tree.body if _defines(node) & wanted]
    missing = wanted - set().union(*(_defines(node) for node in body)) if body else wanted
    if missing:
        raise LookupError(f"{path}: no top-level {', '.join(sorted(missing))}")
    exec(compile(ast.Module(body=body, type_ignores=[]), str(path), "exec"), namespace)


def _defines(node: ast.stmt) -> set[str]:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {node.name}
    if isinstance(node, ast.Assign):
        return {target.id for target in node.targets if isinstance(target, ast.Name)}
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return {node.target.id}
    return set()


def _exec_imports(tree: ast.Module, path: Path, namespace: dict[str, Any]) -> None:
    """Run each top-level import of ``tree`` (also those under ``if TYPE_CHECKING``) alone."""
    nodes: list[ast.Import | ast.ImportFrom] = []
    for node in tree.body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            nodes.append(node)
        elif isinstance(node, ast.If | ast.Try):
            nodes.extend(
                inner for inner in node.body if isinstance(inner, ast.Import | ast.ImportFrom)
            )
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            continue
        try:
            exec(compile(ast.Module(body=[node], type_ignores=[]), str(path), "exec"), namespace)
        except Exception:  # an import the functions run here do not need
            for alias in node.names:
                namespace[(alias.asname or alias.name).split(".")[0]] = Stub
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                _import_names_one_by_one(node, namespace)


def _exec_definitions(tree: ast.Module, path: Path, namespace: dict[str, Any]) -> None:
    """Define each top-level function, class and assignment of ``tree`` on its own (module
    constants and helpers the extracted methods call); one that cannot be built here is left
    out. Calls at top level (registrations) are not run."""
    for node in tree.body:
        if isinstance(
            node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Assign | ast.AnnAssign
        ):
            with contextlib.suppress(Exception):
                module = ast.Module(body=[node], type_ignores=[])
                exec(compile(module, str(path), "exec"), namespace)


def _import_names_one_by_one(node: ast.ImportFrom, namespace: dict[str, Any]) -> None:
    """Bind each name of a failed ``from m import a, b`` that ``m`` does define."""
    try:
        module = importlib.import_module(str(node.module))
    except Exception:
        return
    for alias in node.names:
        with contextlib.suppress(Exception):
            namespace[alias.asname or alias.name] = getattr(module, alias.name)


# --- extracting methods from a file that does not import whole ----------------------------------


# Decorators an extracted method keeps; the others (kernels, registrations) are dropped.
KEPT_DECORATORS = frozenset(
    {"classmethod", "staticmethod", "property", "cached_property", "functools.cached_property"}
)


@dataclass(frozen=True)
class Extracted:
    """Methods of one class, extracted from a wheel file and executed in a namespace built from
    that file's imports. ``cls`` holds them (with the class's own bases dropped);
    ``lines`` maps each method to ``(wheel-relative path, first line, last line)``."""

    cls: Any
    lines: Mapping[str, tuple[str, int, int]]

    def cite(self, method: str) -> str:
        path, first, last = self.lines[method]
        return f"{path}:{first}-{last}"


def find_class(path: Path, name: str) -> ast.ClassDef:
    """The top-level class ``name`` in ``path``; ``LookupError`` if there is none."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            return node
    raise LookupError(f"{path}: no class {name}")


def extract_class(
    runtime: PeerRuntime,
    path: Path,
    class_name: str,
    methods: Sequence[str],
    *,
    extra: Mapping[str, Any] | None = None,
    bases: Sequence[type] = (),
) -> Extracted:
    """Extract ``methods`` (and the class's plain class-level assignments) of ``class_name`` in
    ``path``, and execute them as a class whose bases are ``bases`` (other extracted classes; the
    class's own are dropped), in a namespace of the file's imports (run through ``runtime``,
    which must be entered) updated with ``extra``. Methods that ``methods`` does not name are
    not there: a base's are reached through ``bases``.

    Decorators are kept (``classmethod``, ``property``, ``staticmethod``); a method missing
    from the class raises ``LookupError``."""
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source, str(path))
    node = find_class(path, class_name)
    package = runtime.relative(path).rsplit("/", 1)[0].replace("/", ".")
    # __package__ lets the file's relative imports (``from ..mamba_utils import``) resolve.
    namespace: dict[str, Any] = {
        "__name__": f"peer_extract.{path.stem}",
        "__package__": package,
        "logger": Stub(),
    }
    _exec_imports(tree, path, namespace)
    _exec_definitions(tree, path, namespace)
    namespace.update(extra or {})
    body: list[ast.stmt] = []
    lines: dict[str, tuple[str, int, int]] = {}
    found: set[str] = set()
    for item in node.body:
        if isinstance(item, ast.FunctionDef) and item.name in methods:
            item.decorator_list = [
                decorator
                for decorator in item.decorator_list
                if ast.unparse(decorator) in KEPT_DECORATORS
            ]
            body.append(item)
            found.add(item.name)
            end = item.end_lineno or item.lineno
            lines[item.name] = (runtime.relative(path), item.lineno, end)
        elif (
            isinstance(item, ast.Assign)
            and all(isinstance(target, ast.Name) for target in item.targets)
        ) or (isinstance(item, ast.AnnAssign) and item.value is not None):
            # A class attribute a method may read; one that cannot be evaluated here is dropped.
            guard = ast.Try(
                body=[item],
                handlers=[
                    ast.ExceptHandler(
                        type=ast.Name("Exception", ast.Load()), name=None, body=[ast.Pass()]
                    )
                ],
                orelse=[],
                finalbody=[],
            )
            body.append(guard)
    missing = set(methods) - found
    if missing:
        raise LookupError(f"{path}: class {class_name} has no {', '.join(sorted(missing))}")
    base_names = [f"_peer_base_{index}" for index in range(len(bases))]
    namespace.update(zip(base_names, bases, strict=True))
    stripped = ast.ClassDef(
        name=class_name,
        bases=[ast.Name(name, ast.Load()) for name in base_names],
        keywords=[],
        body=body or [ast.Pass()],
        decorator_list=[],
    )
    if "type_params" in ast.ClassDef._fields:  # Python 3.12+
        stripped.type_params = []  # type: ignore[attr-defined,unused-ignore]
    ast.copy_location(stripped, node)
    module = ast.Module(body=[stripped], type_ignores=[])
    ast.fix_missing_locations(module)
    try:
        exec(compile(module, str(path), "exec"), namespace)
    except Exception as error:
        raise LookupError(f"{path}: class {class_name}: {error!r}") from error
    return Extracted(namespace[class_name], lines)


def top_level_value(path: Path, name: str) -> ast.expr:
    """The value expression of the top-level assignment ``name = ...`` (or
    ``name: T = ...``) in ``path``; ``LookupError`` if there is none."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        target = (
            node.targets[0]
            if isinstance(node, ast.Assign)
            else node.target
            if isinstance(node, ast.AnnAssign)
            else None
        )
        value = getattr(node, "value", None)
        if isinstance(target, ast.Name) and target.id == name and value is not None:
            return value  # type: ignore[no-any-return]
    raise LookupError(f"{path}: no top-level {name}")


def names_table(path: Path, name: str) -> dict[str, str]:
    """A top-level ``name = {"key": Expression, ...}`` of ``path`` as key -> source text."""
    value = top_level_value(path, name)
    if not isinstance(value, ast.Dict):
        raise LookupError(f"{path}: {name} is not a dict literal")
    return {
        ast.literal_eval(key): ast.unparse(item)
        for key, item in zip(value.keys, value.values, strict=True)
        if key is not None
    }


def class_bases(path: Path, class_name: str) -> list[str]:
    """The base-class names written in ``class_name``'s definition in ``path``."""
    return [ast.unparse(base) for base in find_class(path, class_name).bases]


def callable_name(function: Callable[..., Any]) -> str:
    """``module.qualname`` of ``function``, for reports."""
    return f"{getattr(function, '__module__', '?')}.{getattr(function, '__qualname__', '?')}"


# --- the two servers' runtimes -------------------------------------------------------------------


@dataclass
class Parallel:
    """The process state the peers read through their parallel-group getters (vLLM
    ``get_tensor_model_parallel_world_size``; SGLang ``get_parallel()``,
    ``linear_attn_tp_size()``): one tensor-parallel group of ``tp`` ranks, no attention DP, no
    context or pipeline parallelism. Set ``tp`` before each call."""

    tp: int = 1

    def sglang_parallel(self) -> types.SimpleNamespace:
        # The fields of SGLang's ParallelContext that config classes and sizing read
        # (S:sglang/srt/runtime_context.py:1285-1286 returns the published one).
        return types.SimpleNamespace(
            tp_size=self.tp,
            attn_tp_size=self.tp,
            moe_tp_size=self.tp,
            attn_dp_size=1,
            attn_cp_size=1,
            pp_size=1,
            dp_size=1,
            tp_rank=0,
            attn_tp_rank=0,
        )


def _module(name: str, **attributes: Any) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__dict__.update(attributes)
    return module


def _env_default(path: Path, variable: str) -> Any:
    """The default SGLang declares for ``variable`` in ``environ.py``
    (``NAME = EnvStr(default)``), read from the file's AST."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == variable for t in node.targets)
            and isinstance(node.value, ast.Call)
            and node.value.args
        ):
            return ast.literal_eval(node.value.args[0])
    raise LookupError(f"{path}: no {variable}")


class EnvValue:
    """SGLang's ``envs.NAME`` as the code reads it: ``.get()`` returns the value."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def get(self) -> Any:
        return self.value


# Modules run whole from the vLLM wheel (their other imports are stubs or partial modules).
VLLM_REAL = (
    "vllm.envs",
    "vllm.model_executor.layers.mamba.mamba_utils",
    "vllm.v1.kv_cache_interface",
    "vllm.utils.math_utils",
    "vllm.v1.kv_cache_layout",
    "vllm.v1.kv_cache_spec_registry",
    "vllm.v1.attention.backends.registry",
)
# Partial modules: the named top-level definitions of the wheel file, nothing else.
VLLM_PARTIAL: Mapping[str, tuple[str | None, Sequence[str]]] = {
    "vllm.utils.torch_utils": (
        None,
        (
            "STR_DTYPE_TO_TORCH_DTYPE",
            "get_kv_cache_torch_dtype",
            "get_dtype_size",
            "kv_cache_dtype_str_to_dtype",
        ),
    ),
    "vllm.distributed": ("vllm/distributed/utils.py", ("ensure_divisibility", "divide")),
    "vllm.config.utils": (None, ("getattr_iter",)),
    "vllm.transformers_utils.config": (None, ("CONFIG_FIELD_ALIASES", "get_hf_text_config")),
    "vllm.transformers_utils.deepseek_v4_utils": (None, ("get_compress_ratios",)),
}
SGLANG_REAL = ("sglang.srt.configs.mamba_utils",)
SGLANG_PARTIAL: Mapping[str, tuple[str | None, Sequence[str]]] = {
    "sglang.srt.distributed.utils": (None, ("ensure_divisibility", "divide")),
}


def vllm_runtime(wheels: Wheels, parallel: Parallel) -> PeerRuntime:
    """A runtime for vLLM 0.33.0's sizing code. Stubs written here:

    * ``vllm.envs`` runs whole: environment variables with vLLM's defaults (with
      ``VLLM_SSM_CONV_STATE_LAYOUT`` unset, ``get_conv_state_layout`` is "SD",
      V:vllm/model_executor/layers/mamba/mamba_utils.py:28-45; a ``VLLM_*`` variable set in
      this process applies, as it would to the server);
    * ``vllm.distributed``: the wheel's own ``divide``/``ensure_divisibility``
      (V:vllm/distributed/utils.py:51-55, :130-134) plus
      ``get_tensor_model_parallel_world_size`` returning ``parallel.tp``;
    * ``transformers``, ``torch`` and every other import: placeholders."""
    runtime = PeerRuntime(
        {"vllm": wheels.vllm},
        real=VLLM_REAL,
        partial=VLLM_PARTIAL,
        stubbed_roots=("transformers", "pydantic", "msgspec", "triton", "flashinfer"),
        real_prefixes=("vllm.transformers_utils.configs.",),
    )
    runtime.stubs.update(transformers_stub(runtime.touched))
    return runtime


def vllm_distributed(runtime: PeerRuntime, parallel: Parallel) -> types.ModuleType:
    """Import ``vllm.distributed`` (partial) and give it the world-size getter."""
    module = runtime.import_module("vllm.distributed")
    state = runtime.import_module("vllm.distributed.parallel_state")
    for target in (module, state):
        target.get_tensor_model_parallel_world_size = lambda: parallel.tp  # type: ignore[attr-defined]
        target.get_tensor_model_parallel_rank = lambda: 0  # type: ignore[attr-defined]
    return module


def sglang_runtime(
    wheels: Wheels, parallel: Parallel, *, mamba_ssm_dtype: str | None = None
) -> PeerRuntime:
    """A runtime for SGLang 0.5.23's sizing code. Stubs written here:

    * ``sglang.srt.environ``: ``envs.SGLANG_MAMBA_CONV_DTYPE`` and ``SGLANG_MAMBA_SSM_DTYPE``
      with the defaults the wheel declares (read from S:sglang/srt/environ.py:1628-1629);
      ``mamba_ssm_dtype`` stands for ``--mamba-ssm-dtype``, which sets the latter
      (S:sglang/srt/arg_groups/serving_hook.py:439-440);
    * ``sglang.srt.runtime_context``: ``get_parallel()`` and ``linear_attn_tp_size()`` from
      ``parallel`` (S:sglang/srt/runtime_context.py:484-486, :1285-1286);
    * ``sglang.srt.utils``: ``is_cpu()`` False (a GPU server), other helpers placeholders;
    * ``transformers``: ``PretrainedConfig`` that keeps its keyword arguments as attributes,
      as transformers' does, so SGLang's own config classes run;
    * ``torch`` and every other import: placeholders."""
    environ = wheels.sglang / "sglang/srt/environ.py"
    conv_default = _env_default(environ, "SGLANG_MAMBA_CONV_DTYPE")
    ssm_default = _env_default(environ, "SGLANG_MAMBA_SSM_DTYPE")
    envs = types.SimpleNamespace(
        SGLANG_MAMBA_CONV_DTYPE=EnvValue(conv_default),
        SGLANG_MAMBA_SSM_DTYPE=EnvValue(
            ssm_default if mamba_ssm_dtype is None else mamba_ssm_dtype
        ),
    )
    touched: set[str] = set()
    runtime_context = StubModule("sglang.srt.runtime_context", touched)
    runtime_context.get_parallel = parallel.sglang_parallel  # type: ignore[attr-defined]
    runtime_context.linear_attn_tp_size = lambda: parallel.tp  # type: ignore[attr-defined]
    utils = StubModule("sglang.srt.utils", touched)
    utils.is_cpu = lambda: False  # type: ignore[attr-defined]
    runtime = PeerRuntime(
        {"sglang": wheels.sglang},
        real=SGLANG_REAL,
        partial=SGLANG_PARTIAL,
        stubs={
            "sglang.srt.environ": _module("sglang.srt.environ", envs=envs),
            "sglang.srt.runtime_context": runtime_context,
            "sglang.srt.utils": utils,
            **transformers_stub(touched),
        },
        stubbed_roots=("transformers", "msgspec", "triton", "PIL"),
        real_prefixes=("sglang.srt.configs.",),
    )
    runtime.touched = touched
    return runtime


class PretrainedConfig:
    """transformers' ``PretrainedConfig`` as far as the servers' config classes need it:
    keyword arguments become attributes (transformers does the same for the ones a class does
    not declare); ``dtype``/``torch_dtype`` strings become torch dtypes of the runtime's torch,
    as transformers 5 does; ``get_text_config`` is transformers 5.23's (configuration_utils.py
    ``PreTrainedConfig.get_text_config``: the one non-None of ``text_encoder``, ``decoder``,
    ``generator``, ``text_config``, else the config itself); ``to_dict`` returns the
    attributes. A few of transformers' own defaults are class attributes."""

    model_type = ""
    name_or_path = ""
    architectures: Any = None
    is_encoder_decoder = False
    tie_word_embeddings = True
    dtype: Any = None

    def __init__(self, **kwargs: Any) -> None:
        for key, value in kwargs.items():
            setattr(self, key, value)
        dtype = kwargs.get("dtype", kwargs.get("torch_dtype"))
        torch = sys.modules.get("torch")
        if (
            isinstance(dtype, str)
            and torch is not None
            and isinstance(getattr(torch, dtype, None), FakeDtype)
        ):
            self.dtype = getattr(torch, dtype)

    def get_text_config(self, decoder: Any = None, encoder: Any = None) -> Any:
        names = ("text_encoder", "decoder", "generator", "text_config")
        found = [name for name in names if getattr(self, name, None) is not None]
        if len(found) > 1:
            raise ValueError(f"Multiple valid text configs were found in the model config: {found}")
        return getattr(self, found[0]) if found else self

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


class _TransformersModule(StubModule):
    """A transformers module whose ``...Config`` names are ``PretrainedConfig`` subclasses (a
    server's config class that derives from transformers' own then keeps the checkpoint's
    fields as attributes; transformers' defaults and derivations are not applied)."""

    def __getattr__(self, attribute: str) -> Any:
        if attribute.endswith("Config") and attribute[:1].isupper() and attribute != "AutoConfig":
            made = type(attribute, (PretrainedConfig,), {"__module__": self.__name__})
            setattr(self, attribute, made)
            return made
        return super().__getattr__(attribute)


def transformers_stub(touched: set[str]) -> dict[str, types.ModuleType]:
    """``transformers`` and ``transformers.configuration_utils`` with ``PretrainedConfig``
    (both spellings), ``...Config`` classes as ``PretrainedConfig`` subclasses; every other
    name a placeholder."""
    transformers = _TransformersModule("transformers", touched)
    configuration_utils = _TransformersModule("transformers.configuration_utils", touched)
    for module in (transformers, configuration_utils):
        module.PretrainedConfig = PretrainedConfig  # type: ignore[attr-defined]
        module.PreTrainedConfig = PretrainedConfig  # type: ignore[attr-defined]
    transformers.configuration_utils = configuration_utils  # type: ignore[attr-defined]
    return {"transformers": transformers, "transformers.configuration_utils": configuration_utils}
