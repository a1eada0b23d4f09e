"""The recurrent layer a release's model builds, and what its ``__init__`` sets, from that
release's own files.

A layer class can override ``MambaBase.get_kv_cache_spec`` with attributes its ``__init__``
computes (Kimi K3's KDA layer: ``num_prefill_checkpoint_blocks=int(self.kda_prefill_backend ==
"flashkda")``, vllm-0.29.0:vllm/models/kimi_k3/nvidia/kda.py:594-600, the backend chosen at
kda.py:519-532). The oracle builds no layer; here:

* ``constructed(tree, files, env)``: the layer classes the model's files construct
  (``self.self_attn = KimiK3DeltaAttention(...)``, vllm-0.29.0:vllm/models/kimi_k3/nvidia/
  model.py:894), each with the ``if`` branches that guard the construction evaluated where they
  can be (the function's parameters bound to the case's config, the simple assignments before
  the branch run): a class whose guard is false for this config is not the one built (the same
  file builds Kimi-Linear's layer when ``use_full_rank_gate`` is unset, model.py:891-907);
* ``init_slice(tree, file, cls, wanted)``: the statements of the class's ``__init__`` (and its
  bases', through ``super().__init__``) that the attributes ``wanted`` depend on, a backward
  slice over assignments, in source order, to be executed from the release's source.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Iterator, Mapping
from typing import Any

from .release_tree import ReleaseTree

__all__ = ["constructed", "init_slice", "self_reads"]

UNKNOWN = object()


def _calls(tree: ReleaseTree, relative: str) -> Iterator[tuple[str, ast.FunctionDef, list[Any]]]:
    """(called name, enclosing function, path of (If node, branch taken)) for each call of a
    bare name inside a function of ``relative``."""

    def walk(
        body: list[ast.stmt], func: ast.FunctionDef, path: list[Any], prefix: list[ast.stmt]
    ) -> Iterator[tuple[str, ast.FunctionDef, list[Any]]]:
        for position, stmt in enumerate(body):
            before = prefix + body[:position]
            if isinstance(stmt, ast.FunctionDef):
                yield from walk(stmt.body, stmt, [], [])
                continue
            if isinstance(stmt, ast.ClassDef):
                for item in stmt.body:
                    if isinstance(item, ast.FunctionDef):
                        yield from walk(item.body, item, [], [])
                continue
            if isinstance(stmt, ast.If):
                yield from _names_called(stmt.test, func, path, before)
                yield from walk(stmt.body, func, [*path, (stmt, True, before)], before)
                yield from walk(stmt.orelse, func, [*path, (stmt, False, before)], before)
                continue
            nested = [
                getattr(stmt, field, None) or []
                for field in ("body", "orelse", "finalbody", "handlers")
            ]
            if any(nested) and not isinstance(stmt, ast.Expr):
                for inner in nested:
                    blocks = [h.body for h in inner] if inner and isinstance(
                        inner[0], ast.ExceptHandler
                    ) else [inner]  # fmt: skip
                    for block in blocks:
                        yield from walk(block, func, path, before)
            yield from _names_called(stmt, func, path, before)

    module = tree._tree(relative)
    for node in module.body:
        if isinstance(node, ast.FunctionDef):
            yield from walk(node.body, node, [], [])
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    yield from walk(item.body, item, [], [])


def _names_called(
    node: ast.AST, func: ast.FunctionDef, path: list[Any], before: list[ast.stmt]
) -> Iterator[tuple[str, ast.FunctionDef, list[Any]]]:
    if isinstance(node, (ast.If, ast.For, ast.While, ast.With, ast.Try)):
        # Only the header of a compound statement; its body is walked on its own.
        headers = [getattr(node, f) for f in ("test", "iter", "items") if hasattr(node, f)]
        nodes: list[Any] = headers
    else:
        nodes = [node]
    for top in nodes:
        for item in ast.walk(top) if isinstance(top, ast.AST) else ():
            if isinstance(item, ast.Call) and isinstance(item.func, ast.Name):
                yield item.func.id, func, path


def _guard(
    func: ast.FunctionDef,
    path: list[Any],
    params: Mapping[str, Any],
    globals_: dict[str, Any],
    filename: str,
) -> bool | object:
    """Whether every ``if`` on ``path`` takes the branch it names, for these parameters:
    True, False, or UNKNOWN (a test that cannot be evaluated here)."""
    names = {a.arg for a in [*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs]}
    local: dict[str, Any] = {k: v for k, v in params.items() if k in names}
    answer: bool | object = True
    for stmt, branch, before in path:
        for earlier in before:
            if isinstance(earlier, (ast.Assign, ast.AnnAssign)) and all(
                isinstance(t, ast.Name)
                for t in (earlier.targets if isinstance(earlier, ast.Assign) else [earlier.target])
            ):
                _try_exec(earlier, globals_, local, filename)
        try:
            value = eval(
                compile(ast.Expression(stmt.test), filename, "eval"), {**globals_, **local}
            )
        except Exception:
            answer = UNKNOWN
            continue
        if bool(value) != branch:
            return False
    return answer


def _try_exec(stmt: ast.stmt, globals_: dict[str, Any], local: dict[str, Any], name: str) -> None:
    module = ast.fix_missing_locations(ast.Module(body=[stmt], type_ignores=[]))
    scope = {**globals_, **local}
    try:
        exec(compile(module, name, "exec"), scope)
    except Exception:
        return
    for target in stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]:  # type: ignore[attr-defined]
        if isinstance(target, ast.Name) and target.id in scope:
            local[target.id] = scope[target.id]


def constructed(
    tree: ReleaseTree,
    files: list[str],
    is_layer: Any,
    params: Mapping[str, Any],
    globals_: dict[str, Any],
) -> set[tuple[str, str]]:
    """The (file, class) of each layer class (``is_layer(file, name)`` gives its defining file
    or None) that ``files`` construct under guards not false for ``params``."""
    found: set[tuple[str, str]] = set()
    for relative in dict.fromkeys(files):
        if not tree.has(relative):
            continue
        for name, func, path in _calls(tree, relative):
            source = is_layer(relative, name)
            if source is None:
                continue
            guard = _guard(func, path, params, globals_, f"vllm-{tree.version}:{relative}")
            if guard is not False:
                found.add((source, name))
    return found


def self_reads(node: ast.AST) -> set[str]:
    """The attributes ``self.X`` that ``node`` reads."""
    return {
        n.attr
        for n in ast.walk(node)
        if isinstance(n, ast.Attribute)
        and isinstance(n.value, ast.Name)
        and n.value.id == "self"
        and isinstance(n.ctx, ast.Load)
    }


def _assigns(stmt: ast.stmt) -> set[str]:
    """Names (``x``) and attributes (``self.x``) ``stmt`` assigns, at any depth."""
    out: set[str] = set()
    for node in ast.walk(stmt):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)) and node.value is not None:
            targets = [node.target]
        for target in targets:
            for item in ast.walk(target):
                if isinstance(item, ast.Name) and isinstance(item.ctx, ast.Store):
                    out.add(item.id)
                elif (
                    isinstance(item, ast.Attribute)
                    and isinstance(item.value, ast.Name)
                    and item.value.id == "self"
                ):
                    out.add(f"self.{item.attr}")
    return out


def _reads(stmt: ast.stmt) -> set[str]:
    names = {
        n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    }
    return names | {f"self.{a}" for a in self_reads(stmt)}


def _slice_block(
    body: list[ast.stmt], needed: set[str], skip: set[str]
) -> tuple[list[ast.stmt], set[str]]:
    """The statements of ``body`` that assign what ``needed`` names, and what they read, a
    backward slice; a compound statement keeps its header and, of its blocks, the statements
    the slice needs (an ``if`` that sets the attribute also builds an exporter,
    vllm-0.33.0:vllm/model_executor/layers/mamba/gdn/qwen_gdn_linear_attn.py:691-703)."""
    needed = set(needed)
    taken: list[ast.stmt] = []
    for stmt in reversed(body):
        assigned = _assigns(stmt)
        if not assigned & needed:
            continue
        blocks = [f for f in ("body", "orelse", "finalbody") if getattr(stmt, f, None)]
        if isinstance(stmt, (ast.If, ast.For, ast.While, ast.With)) and blocks:
            kept = copy.copy(stmt)
            inner: set[str] = set()
            for field in blocks:
                part, reads = _slice_block(getattr(stmt, field), needed, skip)
                setattr(kept, field, part or ([ast.Pass()] if field == "body" else []))
                inner |= reads
            header = [getattr(stmt, f) for f in ("test", "iter", "items") if hasattr(stmt, f)]
            heads = {
                r
                for h in header
                for node in (h if isinstance(h, list) else [h])
                for r in _reads(
                    ast.Expr(node.context_expr if isinstance(node, ast.withitem) else node)
                )
            }
            taken.insert(0, kept)
            needed |= inner | heads
        else:
            taken.insert(0, stmt)
            if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
                needed -= assigned
            needed |= _reads(stmt)
        needed = {r for r in needed if not r.startswith("self.") or r[5:] not in skip}
        needed.discard("self")
    return taken, needed


def init_slice(
    tree: ReleaseTree, relative: str, cls: str, wanted: set[str], skip: set[str]
) -> list[tuple[str, list[ast.stmt], list[str]]]:
    """The statements of ``cls``'s ``__init__`` (file ``relative``) that ``self.X`` for X in
    ``wanted`` depend on, preceded by its bases' (``super().__init__``) for the attributes it
    reads and does not set: [(file, statements, the ``__init__``'s parameter names)], bases
    first. ``skip``: attributes the stand-in answers (methods, the model view)."""
    owner = tree.method_owner(relative, cls, "__init__")
    if owner is None:
        return []
    node = tree.class_node(*owner)
    assert node is not None
    init = next(i for i in node.body if isinstance(i, ast.FunctionDef) and i.name == "__init__")
    taken, needed = _slice_block(init.body, {f"self.{a}" for a in wanted}, skip)
    inherited = {n[5:] for n in needed if n.startswith("self.")}
    params = [a.arg for a in [*init.args.posonlyargs, *init.args.args, *init.args.kwonlyargs]]
    out: list[tuple[str, list[ast.stmt], list[str]]] = []
    if inherited:
        for base in node.bases:
            base_name = ast.unparse(base)
            if "." in base_name or "[" in base_name:
                continue
            base_file = owner[0] if tree.class_node(owner[0], base_name) else None
            base_file = base_file or tree.import_source(owner[0], base_name)
            if base_file is None or tree.class_node(base_file, base_name) is None:
                continue
            out.extend(init_slice(tree, base_file, base_name, inherited, skip))
    out.append((owner[0], taken, params))
    return out


def init_defaults(tree: ReleaseTree, relative: str, cls: str) -> dict[str, ast.expr]:
    """The ``__init__`` parameters of ``cls`` that have defaults, with their expressions."""
    owner = tree.method_owner(relative, cls, "__init__")
    if owner is None:
        return {}
    node = tree.class_node(*owner)
    assert node is not None
    init = next(i for i in node.body if isinstance(i, ast.FunctionDef) and i.name == "__init__")
    positional = [*init.args.posonlyargs, *init.args.args]
    out = dict(
        zip(
            [a.arg for a in positional][-len(init.args.defaults) :],
            init.args.defaults,
            strict=False,
        )
    )
    if not init.args.defaults:
        out = {}
    for arg, default in zip(init.args.kwonlyargs, init.args.kw_defaults, strict=True):
        if default is not None:
            out[arg.arg] = default
    return out
