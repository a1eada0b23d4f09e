"""One vLLM release's extracted source tree, and where that release keeps each definition.

The releases' trees (``vllm/**/*.py`` of each wheel, 0.10.2 to 0.33.0) live in
``$PEER_AGREEMENT_RELEASES`` (default ``/work/peer_cache``) as ``vllm-X.Y.Z/vllm/...``.

Functions moved between releases (the hybrid block alignment is
``HybridAttentionMambaModelConfig.verify_and_update_config`` in
``vllm/model_executor/models/config.py`` up to 0.19.x and ``Platform._align_hybrid_block_size``
in ``vllm/platforms/interface.py`` from 0.20; the KV-cache groups are in
``vllm/v1/core/kv_cache_utils.py`` early and ``kv_cache_planning.py`` late), so a definition is
never looked up at a path another release uses: ``defining`` searches this release's own tree
for the file that defines it, and ``registry`` reads the release's own model registry.
"""

from __future__ import annotations

import ast
import functools
import os
from pathlib import Path

__all__ = ["ReleaseTree", "releases_root"]

# The registry tables a generative or multimodal architecture is served from (each release's
# vllm/model_executor/models/registry.py; a table a release lacks is skipped).
REGISTRY_TABLES = (
    "_TEXT_GENERATION_MODELS",
    "_EMBEDDING_MODELS",
    "_LATE_INTERACTION_MODELS",
    "_REWARD_MODELS",
    "_TOKEN_CLASSIFICATION_MODELS",
    "_SEQUENCE_CLASSIFICATION_MODELS",
    "_MULTIMODAL_MODELS",
)


def releases_root() -> Path:
    """Where the releases' trees are: ``$PEER_AGREEMENT_RELEASES`` or ``/work/peer_cache``."""
    return Path(os.environ.get("PEER_AGREEMENT_RELEASES", "/work/peer_cache"))


class ReleaseTree:
    """The source tree of vLLM ``version`` (``root`` holds ``vllm/``)."""

    def __init__(self, version: str, root: Path | None = None) -> None:
        self.version = version
        self.root = (releases_root() if root is None else root) / f"vllm-{version}"
        if not (self.root / "vllm").is_dir():
            raise FileNotFoundError(f"{self.root}/vllm: no extracted tree for vLLM {version}")

    def path(self, relative: str) -> Path:
        return self.root / relative

    def has(self, relative: str) -> bool:
        return (self.root / relative).is_file()

    def cite(self, relative: str, name: str | None = None) -> str:
        """``vllm-X.Y.Z:path[:line]``, the line where ``name`` is defined in that file."""
        line = self.line_of(relative, name) if name else None
        return f"vllm-{self.version}:{relative}" + (f":{line}" if line else "")

    @functools.cache  # noqa: B019 -- one tree per release, alive for the run
    def _tree(self, relative: str) -> ast.Module:
        return ast.parse(self.path(relative).read_text(encoding="utf-8"))

    def line_of(self, relative: str, name: str | None) -> int | None:
        """The line of ``name`` (``Class`` or ``Class.method`` or a function) in ``relative``."""
        if name is None:
            return None
        head, _, tail = name.partition(".")
        for node in self._tree(relative).body:
            if isinstance(node, (ast.ClassDef, ast.FunctionDef)) and node.name == head:
                if not tail:
                    return node.lineno
                for item in getattr(node, "body", []):
                    if isinstance(item, ast.FunctionDef) and item.name == tail:
                        return item.lineno
        return None

    @functools.cache  # noqa: B019
    def defining(self, name: str, *, method: str | None = None) -> str | None:
        """The file (relative to the root) that defines top-level ``name`` (a class with
        ``method`` in its own body, where given), searched over this release's whole tree;
        ``None`` if the release has none."""
        needles = (f"def {name}(", f"class {name}(", f"class {name}:")
        for path in sorted((self.root / "vllm").rglob("*.py")):
            text = path.read_text(encoding="utf-8", errors="replace")
            if not any(needle in text for needle in needles):
                continue
            relative = str(path.relative_to(self.root))
            if method is None and self.line_of(relative, name) is not None:
                return relative
            if method is not None and self.line_of(relative, f"{name}.{method}") is not None:
                return relative
        return None

    @functools.cached_property
    def registry(self) -> dict[str, tuple[str, str]]:
        """Architecture -> (module, class) from this release's own registry tables."""
        relative = "vllm/model_executor/models/registry.py"
        found: dict[str, tuple[str, str]] = {}
        for node in self._tree(relative).body:
            target = node.targets[0] if isinstance(node, ast.Assign) else None
            table = isinstance(target, ast.Name) and target.id in REGISTRY_TABLES
            if not table or not isinstance(node.value, ast.Dict):  # type: ignore[union-attr]
                continue
            for key, value in zip(node.value.keys, node.value.values, strict=True):  # type: ignore[union-attr]
                try:
                    arch, entry = ast.literal_eval(key), ast.literal_eval(value)  # type: ignore[arg-type]
                except ValueError:
                    continue
                if isinstance(entry, tuple) and len(entry) == 2:
                    found.setdefault(arch, entry)
        return found

    def model_file(self, module: str) -> str:
        """The file a registry entry's module names (``vllm.models.X`` packages: their
        ``__init__``)."""
        if not module.startswith("vllm."):
            return f"vllm/model_executor/models/{module}.py"
        package = module.replace(".", "/")
        return f"{package}/__init__.py" if self.has(f"{package}/__init__.py") else f"{package}.py"

    def class_node(self, relative: str, name: str) -> ast.ClassDef | None:
        for node in self._tree(relative).body:
            if isinstance(node, ast.ClassDef) and node.name == name:
                return node
        return None

    def import_source(self, relative: str, name: str) -> str | None:
        """The file ``name`` is imported from in ``relative`` (``from X import name``)."""
        for node in ast.walk(self._tree(relative)):
            if isinstance(node, ast.ImportFrom) and node.module is not None:
                for alias in node.names:
                    if (alias.asname or alias.name) != name:
                        continue
                    if node.level:
                        base = Path(relative).parent
                        for _ in range(node.level - 1):
                            base = base.parent
                        module = str(base / node.module.replace(".", "/"))
                    else:
                        module = node.module.replace(".", "/")
                    for candidate in (f"{module}.py", f"{module}/__init__.py"):
                        if self.has(candidate):
                            return candidate
        return None

    def method_owner(self, relative: str, cls: str, method: str) -> tuple[str, str] | None:
        """(file, class) whose body defines ``method`` for ``cls`` of ``relative``: the class
        itself or the first base, followed through the file's imports, that does."""
        node = self.class_node(relative, cls)
        if node is None:
            source = self.import_source(relative, cls)
            return self.method_owner(source, cls, method) if source else None
        if any(isinstance(i, ast.FunctionDef) and i.name == method for i in node.body):
            return relative, cls
        for base in node.bases:
            base_name = ast.unparse(base)
            if "." in base_name or "[" in base_name:
                continue
            owner = self.method_owner(relative, base_name, method)
            if owner is not None:
                return owner
        return None
