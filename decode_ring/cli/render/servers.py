"""The text and JSON forms of ``VllmReservation`` and ``SglangReservation``: every term with the
rule and the citation it comes from, and the server's figure beside the naive B x per-sequence
figure with the multiplier. Registered with ``render`` on import."""

from __future__ import annotations

from collections.abc import Mapping

from ...releases import SGLANG, VLLM
from ...servers import (
    GPU_ARCHS,
    ReleaseComparison,
    SglangReservation,
    VllmReservation,
    multiple,
)
from ...units import format_size
from ..servers import LaunchAnswer
from .base import Rendered, render, source_text

__all__: list[str] = []

_V = "vllm/v1/kv_cache_interface.py"
_P = "vllm/v1/core/kv_cache_planning.py"
_S = "sglang/srt/mem_cache/kv_cache_configurator.py"
_POOL = "sglang/srt/model_executor/pool_configurator.py"


def _bytes(value: int | None) -> str:
    return "-" if value is None else f"{format_size(value)} ({value:,} B)"


def _row(label: str, value: str, rule: str = "") -> str:
    return f"  {label:<22} {value:<36} {rule}".rstrip()


def _side_by_side(title: str, rows: list[tuple[str, int, int]]) -> list[str]:
    """The server's figure, the naive one and their ratio, one row each."""
    lines = [f"  {title:<22} {'server':>12}  {'naive B x state':>15}  multiplier"]
    for label, server, naive in rows:
        ratio = multiple(server, naive)
        lines.append(
            f"  {label:<22} {format_size(server):>12}  {format_size(naive):>15}  {ratio:.3f}x"
        )
    return lines


def _version_note(note: str | None) -> str:
    """How the version asked for became the release that answers, after the first line."""
    return f" ({note})" if note else ""


def _log(release: object, lines: tuple[str, ...]) -> list[str]:
    """The lines the server would log, verbatim, to set beside its real log."""
    if not lines:
        return []
    return ["", f"  {release} would log (? where the package cannot predict):"] + [
        f"    {line}" for line in lines
    ]


@render.register
def _(reservation: VllmReservation) -> Rendered:
    r = reservation
    release = f"{VLLM.server} {r.server_version}"
    lines = [*_vllm_inputs(r), *_vllm_pages(r), "", *_vllm_totals(r), *_log(release, r.log_lines)]
    return Rendered(r.as_dict(), lines)


def _vllm_inputs(r: VllmReservation) -> list[str]:
    """The launch, the GPU and its backends, the assumptions and what the config gives."""
    caching = "on" if r.enable_prefix_caching else "off"
    return [
        f"{VLLM.server} {r.server_version} reserves for {r.model_type} ({r.family}), per rank, "
        f"tp rank 1 of {r.tensor_parallel_size}{_version_note(r.server_version_note)}",
        _row("assumed GPU", f"{r.gpu_arch}: {r.gpu}"),
        _row(
            "assumed backends",
            f"attention {r.attention_backend or '-'}, GDN prefill {r.gdn_prefill_backend or '-'}",
            "vllm/platforms/cuda.py:84-178; gdn/qwen_gdn_linear_attn.py:148-270",
        ),
        *(_row("assumed", note) for note in r.assumptions),
        _row("config", source_text(r.source)),
        _row(
            "prefix caching",
            f"{caching} -> mamba_cache_mode {r.mamba_cache_mode}",
            f"{r.prefix_caching_rule} (vllm/engine/arg_utils.py:3075-3081; "
            "model_executor/models/config.py:750-787)",
        ),
        _row(
            "max_model_len",
            str(r.max_model_len),
            f"{r.max_model_len_rule} (transformers_utils/model_arch_config_convertor.py:374-407)",
        ),
        _row("conv dtype", r.conv_dtype, r.conv_dtype_rule),
        _row("ssm dtype", r.ssm_dtype, r.ssm_dtype_rule),
        _row("state layers", str(r.state_layers), "recurrent layers, one MambaSpec each"),
        _row("attention layers", str(r.attention_layers), f"kv cache dtype {r.kv_cache_dtype}"),
    ]


def _vllm_pages(r: VllmReservation) -> list[str]:
    """The block, the pages, the groups and the blocks per request, each with its rule."""
    spec = r.num_speculative_tokens if not r.use_replayssm else 0
    planned_terms = (
        f"2 + s {spec} + checkpoint {r.prefill_checkpoint_blocks}"
        if r.mamba_cache_mode == "align"
        else f"1 + s {spec}"
    )
    return [
        _row(
            "block size",
            f"{r.block_size} tokens",
            f"{r.block_size_rule} (vllm/platforms/interface.py:940-1137)",
        ),
        _row(
            "attention page",
            _bytes(r.attention_page_bytes),
            f"block x kv heads/rank x (head + head_v) x bytes ({_V}:552-617)",
        ),
        _row(
            "state page",
            _bytes(r.state_page_bytes),
            f"sum of prod(shape) x itemsize (MambaSpec.page_size_bytes, {_V}:1117-1129)",
        ),
        _row(
            "state page, padded",
            _bytes(r.state_page_bytes_padded),
            f"one attention page (interface.py:1117-1137; unify, {_P.rsplit('/', 1)[1]}:346-408)",
        ),
        _row(
            "groups",
            f"{r.state_groups} state + {r.attention_groups} attention, {r.group_size} layers each",
            f"_get_kv_cache_groups_uniform_page_size ({_P}:416-556)",
        ),
        _row(
            "bytes per block",
            _bytes(r.bytes_per_block),
            f"group size x padded page (_get_kv_cache_bytes_per_block, {_P}:574-605)",
        ),
        _row(
            "blocks per request",
            f"held {r.state_blocks_per_request}, planned {r.planned_blocks_per_request}",
            f"held 1 + s; planned {planned_terms} (max_memory_usage_bytes, {_V}:1135-1141)",
        ),
    ]


def _vllm_totals(r: VllmReservation) -> list[str]:
    """The state at ``max_num_seqs`` beside the naive figure, and the pool with a budget."""
    lines = [
        *_side_by_side(
            f"at max_num_seqs {r.max_num_seqs}",
            [
                ("held at decode", r.state_bytes, r.naive_state_bytes),
                ("planned at startup", r.planned_state_bytes, r.naive_state_bytes),
            ],
        ),
        "  server: seqs x state groups x blocks x bytes per block; naive: seqs x per-sequence "
        f"state {format_size(r.per_sequence_bytes)}",
    ]
    if r.kv_cache_memory_bytes is not None:
        lines += [
            "",
            *_vllm_budget(r),
            _row("kv cache memory", _bytes(r.kv_cache_memory_bytes), r.kv_cache_memory_rule),
            _row("num blocks", f"{r.num_blocks:,}", f"budget // bytes per block ({_P}:1540-1544)"),
            _row(
                "blocks per request",
                f"{r.blocks_per_request_at_max_model_len:,} at {r.max_model_len:,} tokens",
                "attention groups x ceil(len / block) + state groups x planned",
            ),
            _row(
                "maximum concurrency",
                f"{r.max_concurrency:.2f}x",
                "num blocks / blocks per request (vllm/v1/core/kv_cache_utils.py:1061-1093)",
            ),
            _row(
                "full-context sequences",
                f"{r.full_context_sequences:,}",
                f"sequences of {r.max_model_len:,} tokens the KV pool holds at once",
            ),
        ]
    return lines


def _vllm_budget(r: VllmReservation) -> list[str]:
    """The KV budget vLLM computes from the GPU: each term with its rule; the profiled terms
    marked as estimates where they are."""
    if r.requested_memory_bytes is None:
        return []
    return [
        _row("gpu", f"{r.gpu_name or '-'}, {_bytes(r.gpu_memory_bytes)}", r.gpu_memory_rule or ""),
        _row(
            "requested memory",
            _bytes(r.requested_memory_bytes),
            f"ceil(total x gpu_memory_utilization {r.gpu_memory_utilization:g}) "
            "(request_memory, vllm/v1/worker/utils.py:716-723)",
        ),
        _row("weights", _bytes(r.weights_bytes), r.weights_rule),
        _row("peak activation", _bytes(r.peak_activation_bytes), r.peak_activation_rule),
        _row("non-torch memory", _bytes(r.non_torch_bytes), r.non_torch_rule),
        _row("cuda graphs", _bytes(r.cuda_graph_bytes), r.cuda_graph_rule),
    ]


@render.register
def _(reservation: SglangReservation) -> Rendered:
    r = reservation
    lines = [*_sglang_inputs(r), *_sglang_pools(r), "", *_sglang_totals(r)]
    lines += _log(f"{SGLANG.server} {r.server_version}", r.log_lines)
    return Rendered(r.as_dict(), lines)


def _sglang_inputs(r: SglangReservation) -> list[str]:
    """The launch, the GPU, the assumptions, and the state one request holds."""
    return [
        f"{SGLANG.server} {r.server_version} reserves for {r.model_type} ({r.family}, "
        f"{r.architecture}), per rank, tp rank 1 of {r.tp_size}"
        f"{_version_note(r.server_version_note)}",
        _row("assumed GPU", f"{r.gpu_arch}: {GPU_ARCHS[r.gpu_arch]}"),
        *(_row("assumed", note) for note in r.assumptions),
        _row("config", source_text(r.source)),
        _row("conv dtype", r.conv_dtype, r.conv_dtype_rule),
        _row("ssm dtype", r.ssm_dtype, r.ssm_dtype_rule),
        _row("state layers", str(r.state_layers)),
        _row(
            "per request",
            _bytes(r.per_request_bytes),
            "mamba_cache_per_req: layers x (conv + temporal) (configs/mamba_utils.py:115-125)",
        ),
        _row(
            "radix cache strategy",
            r.mamba_radix_cache_strategy,
            f"{r.strategy_rule} (sglang/srt/arg_groups/overrides.py:453-487)",
        ),
        _row(
            "slots per request",
            str(r.ratio),
            f"_calculate_mamba_ratio ({_S}:3062-3088)",
        ),
    ]


def _sglang_budget(r: SglangReservation) -> list[str]:
    """The budget SGLang computes from the GPU: the static fraction, the weights."""
    if r.gpu_memory_bytes is None or r.pre_model_load_bytes is None:
        return []
    return [
        _row("gpu", f"{r.gpu_name or '-'}, {_bytes(r.gpu_memory_bytes)}", r.gpu_memory_rule or ""),
        _row("mem fraction static", f"{r.mem_fraction_static}", r.mem_fraction_static_rule),
        _row("weights", _bytes(r.weights_bytes), r.weights_rule),
    ]


def _sglang_pools(r: SglangReservation) -> list[str]:
    """The state pool, the KV pool and the running-request cap, each with its rule."""
    return [
        *_sglang_budget(r),
        _row(
            "available memory",
            _bytes(r.available_memory),
            "after the weights, per rank"
            if r.available_memory_rule in ("--available-memory", "")
            else r.available_memory_rule,
        ),
        _row("state slots K", f"{r.slots:,}", f"{r.slots_rule} ({_S}:3229-3409)"),
        _row("state pool", _bytes(r.pool_bytes), r.pool_bytes_rule),
        _row(
            "speculative scratch",
            _bytes(r.speculative_scratch_bytes),
            f"{r.speculative_num_draft_tokens} draft tokens x (running + 1) rows "
            "(memory_pool.py:864-965)",
        ),
        _row("kv cache", _bytes(r.kv_cache_bytes), f"what is left for the KV pool ({_S}:3409)"),
        _row(
            "kv per token",
            _bytes(r.kv_bytes_per_token),
            f"{r.kv_bytes_per_token_rule} (_compute_cell_size, {_POOL}:340-534)",
        ),
        _row(
            "kv tokens",
            "unknown" if r.kv_tokens is None else f"{r.kv_tokens:,}",
            "kv cache // kv per token; the context without attention "
            f"({_POOL}:243-248, 623-634)"
            + ("" if r.max_total_tokens is None else "; at most --max-total-tokens"),
        ),
        _row("context length", f"{r.context_length:,}", r.context_length_rule),
        _row(
            "max running requests",
            str(r.max_running_requests),
            f"{r.max_running_requests_rule} (resolve_max_num_reqs, {_S}:3119-3172)",
        ),
        *_sglang_sequences(r),
    ]


def _sglang_sequences(r: SglangReservation) -> list[str]:
    """How many sequences of the whole context the KV pool holds, beside the running cap."""
    if r.full_context_sequences is None:
        return []
    return [
        _row(
            "full-context sequences",
            f"{r.full_context_sequences:,}",
            f"kv tokens // context: sequences of {r.context_length:,} tokens the KV pool holds "
            "at once",
        )
    ]


def _sglang_totals(r: SglangReservation) -> list[str]:
    """What admitting the requests takes, beside the naive figure."""
    return [
        *_side_by_side(
            f"at {r.requested_requests} requests",
            [
                ("state pool now", r.pool_bytes, r.naive_state_bytes),
                (f"{r.slots_for_requested} slots", r.pool_bytes_for_requested, r.naive_state_bytes),
            ],
        ),
        f"  running {r.requested_requests} takes {r.ratio} slots each, + 1 padding; naive: "
        "requests x per request",
    ]


@render.register
def _(answer: LaunchAnswer) -> Rendered:
    inner = render(answer.reservation)
    server = answer.server
    lines = inner.lines[:1]
    if answer.no_effect:
        lines.append(_row("no effect on memory", ", ".join(answer.no_effect)))
    if answer.ignored:
        lines.append(
            _row("ignored, not modelled", ", ".join(answer.ignored) + " (--allow-unmodelled)")
        )
    if answer.repeated:
        lines.append(
            _row(
                "given more than once",
                ", ".join(answer.repeated) + f": the last value, as {server}'s parser takes it",
            )
        )
    lines += inner.lines[1:]
    json_value = {**inner.json, "launch": answer.as_dict()}
    if answer.comparison is not None:
        lines += _comparison(answer.comparison)
        json_value["compare"] = answer.comparison.as_dict()
    return Rendered(json_value, lines, inner.refusal)


def _comparison(c: ReleaseComparison) -> list[str]:
    """Each release between the two where a rule changed: its changes and the figures they
    moved (one line where they moved none); then the figures that differ end to end."""
    other = f"{c.server} {c.other}" + (f" ({c.other_note})" if c.other_note else "")
    going = "back to" if c.steps and c.steps[0].undone else "on to"
    lines = ["", f"  compared with {other}: from {c.release} {going} {c.other}, release by release"]
    for step in c.steps:
        verb = "undoes" if step.undone else "brings"
        rules = ", ".join(change.rule for change in step.changes) or "no rule change"
        if step.refusal is None and not step.differences:
            lines.append(f"    {step.release:<8} {verb} {rules}: no figure changes")
            continue
        lines.append(f"    {step.release:<8} {verb} {rules}:")
        lines += [f"             {change.what} ({change.where})" for change in step.changes]
        if step.refusal is not None:
            lines.append(f"             -> refused there: {step.refusal}")
        else:
            lines.append(f"             -> {_moved(step.differences)}")
    if c.other_refusal is not None:
        lines.append(f"  {c.server} {c.other} refuses the launch: {c.other_refusal}")
    else:
        moved = _moved(c.differences) if c.differences else "nothing"
        lines.append(f"  {c.release} -> {c.other} in all: {moved}")
    return lines


def _moved(differences: Mapping[str, tuple[object, object]]) -> str:
    return ", ".join(f"{key} {_figure(a)} -> {_figure(b)}" for key, (a, b) in differences.items())


def _figure(value: object) -> str:
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)
