"""The rank launcher of ``tests/test_distributed.py``: one process that
imports torch and ``decode_ring`` once, then forks every rank of every group.

Run as a script, it speaks JSON lines: on its stdin it reads

* ``{"launch": {"dir": d, "plans": [plan, ...]}}``: forks one rank per plan
  (rank ``r`` of ``len(plans)``, joined through the file store ``d/store``,
  printing to ``d/rank{r}.stdout`` and ``d/rank{r}.stderr``), then answers
  ``{"pids": [...]}``, or ``{"error": why}`` when it may not fork;
* ``{"poll": pid}``: answers ``{"alive": bool}``, after reporting every exit
  so far (as ``subprocess.Popen.poll`` reaps before it answers);
* ``{"kill": [pid, ...]}``: SIGKILLs those of them not yet reaped, then
  answers ``{"killed": [pid, ...]}``;

and it reports ``{"ready": pid, "threads": n}`` once torch is imported and
``{"exited": pid, "returncode": code}`` (``-signal`` when killed) for each
rank it reaps. At the end of its stdin it kills the ranks still alive, reaps
them and exits.

Forking after ``import torch`` is safe because this process runs no torch
op, so it starts no thread: it checks that it has one thread, and that it
has published no depth, before every fork. Each rank is a fresh process for
the once-cell, as a rank started with its own interpreter would be.
"""

from __future__ import annotations

import datetime
import json
import os
import select
import signal
import sys
import threading
import time
import traceback
from typing import Any, NoReturn

# Exits are reaped this often while no request comes.
REAP_EVERY_S = 0.005


def run_rank(rank: int, world: int, store: str, plan: list[dict[str, Any]]) -> None:
    """One rank: joins the group, then runs its plan, a list of steps:

    * ``{"pin": n}``: publish n, as an operator's pinned depth would
    * ``{"fit": free}``: fit the ring to ``free`` bytes, agree on the fit
    * ``{"agree": value, "timeout": t}``: agree on ``value``; t is seconds,
      ``{"seconds": s}`` (any of timedelta's fields) for a timedelta, or absent
    * ``{"sleep": s}``: sleep s seconds (arrive late at the next step)
    * ``{"exit_after": s, "code": c}``: sleep s seconds, then exit at once
      with code c
    * ``{"all_reduce": 1}``: a plain collective: is the group still usable?

    It prints one JSON list with an outcome per agree, fit or all_reduce
    step. After an exchange fault it exits at once, as the README tells a
    server to: tearing down a group with a collective in flight blocks until
    its timeout."""
    import torch
    import torch.distributed as dist

    import decode_ring
    from decode_ring.distributed import DecodeRingAgreementError, agree_decode_ring_slots
    from decode_ring.preflight import PreLoadFreeMemory, fit_ring, requested_slots, slot_bytes

    dist.init_process_group(
        "gloo",
        init_method=f"file://{store}",
        rank=rank,
        world_size=world,
        timeout=datetime.timedelta(seconds=60),
    )

    def agree(slots: Any, timeout: Any) -> dict[str, Any]:
        start = time.monotonic()
        outcome: dict[str, Any]
        try:
            outcome = {"agreed": agree_decode_ring_slots(slots, timeout=timeout)}
        except DecodeRingAgreementError as error:
            cause = error.__cause__
            outcome = {
                "error": str(error),
                "cause": None if cause is None else type(cause).__name__,
            }
        outcome["seconds"] = time.monotonic() - start
        outcome["published"] = decode_ring.published_decode_ring_slots()
        return outcome

    outcomes: list[dict[str, Any]] = []
    faulted = False
    for step in plan:
        if "pin" in step:
            decode_ring.set_decode_ring_slots(step["pin"])
        elif "fit" in step:
            explicit = decode_ring.published_decode_ring_slots() is not None
            fit = fit_ring(
                requested_slots(48, False),
                slot_bytes(32, 158_859_264),
                PreLoadFreeMemory(7039 * 2**20, int(step["fit"])),
                explicit=explicit,
            )
            outcomes.append({"fitted": fit.slots, **agree(fit.slots, None)})
        elif "agree" in step:
            timeout = step.get("timeout")
            if isinstance(timeout, dict):
                timeout = datetime.timedelta(**timeout)
            outcomes.append(agree(step["agree"], timeout))
            faulted = "all_gather" in outcomes[-1].get("error", "")
        elif "sleep" in step:
            time.sleep(step["sleep"])
        elif "exit_after" in step:
            time.sleep(step["exit_after"])
            os._exit(step["code"])
        elif "all_reduce" in step:
            total = torch.ones(1)
            dist.all_reduce(total)
            outcomes.append({"all_reduce": int(total.item())})
        if faulted:
            break
    print(json.dumps(outcomes), flush=True)
    if faulted:
        os._exit(0)
    dist.destroy_process_group()


def threads() -> int:
    """This process's threads: the OS's count where /proc has it."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return threading.active_count()


def rank_process(
    rank: int, world: int, directory: str, plan: list[dict[str, Any]], inherited: set[int]
) -> NoReturn:
    """The forked child: closes the launcher's pipes, prints to its own
    files, runs the rank and exits with the code a script would."""
    code = 1
    try:
        for fd in inherited:
            os.close(fd)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        for fd, stream in ((1, "stdout"), (2, "stderr")):
            path = os.path.join(directory, f"rank{rank}.{stream}")
            opened = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(opened, fd)
            os.close(opened)
        run_rank(rank, world, os.path.join(directory, "store"), plan)
        code = 0
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else 1
    except BaseException:
        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def main() -> None:
    # Run as a script, its own folder (tests/) comes first on sys.path; the
    # ranks import nothing from there.
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]

    import torch
    import torch.distributed  # noqa: F401

    import decode_ring
    import decode_ring.distributed
    import decode_ring.preflight

    # The protocol goes on its own descriptor; anything printed on stdout
    # here goes to stderr instead.
    protocol = os.dup(1)
    os.dup2(2, 1)
    children: set[int] = set()

    def send(message: dict[str, Any]) -> None:
        data = (json.dumps(message) + "\n").encode()
        while data:
            data = data[os.write(protocol, data) :]

    def reap() -> None:
        while children:
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                return
            children.discard(pid)
            send({"exited": pid, "returncode": os.waitstatus_to_exitcode(status)})

    def launch(directory: str, plans: list[list[dict[str, Any]]]) -> None:
        published = decode_ring.published_decode_ring_slots()
        if published is not None or threads() != 1:
            send({"error": f"launcher: published depth {published}, {threads()} threads"})
            return
        pids = []
        for rank, plan in enumerate(plans):
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                rank_process(rank, len(plans), directory, plan, {protocol})
            children.add(pid)
            pids.append(pid)
        send({"pids": pids})

    send({"ready": os.getpid(), "threads": threads()})
    buffer = b""
    try:
        while True:
            readable, _, _ = select.select([0], [], [], REAP_EVERY_S)
            if readable:
                chunk = os.read(0, 65536)
                if not chunk:
                    return
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    request = json.loads(line)
                    if "launch" in request:
                        launch(request["launch"]["dir"], request["launch"]["plans"])
                    elif "poll" in request:
                        reap()
                        send({"alive": request["poll"] in children})
                    elif "kill" in request:
                        for pid in request["kill"]:
                            if pid in children:
                                os.kill(pid, signal.SIGKILL)
                        send({"killed": request["kill"]})
            reap()
    finally:
        # The test process closed the pipe, or went away: no rank outlives
        # the launcher.
        for pid in children:
            os.kill(pid, signal.SIGKILL)
        for pid in children:
            os.waitpid(pid, 0)


if __name__ == "__main__":
    main()
    # Every rank is reaped: skip tearing torch down with the interpreter.
    sys.stderr.flush()
    os._exit(0)
