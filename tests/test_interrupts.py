"""Ctrl-C exits 130 quietly: while the commands load, while a config is read from ``/dev/zero``,
while a plan is computed, and while its picture is drawn (the old picture kept).

Issue 28, items 1 and 6: Ctrl-C did not stop ``--config /dev/zero`` (it was still reading at
6.3 GB), and Ctrl-C in the first tenth of a second printed an import traceback. Each test runs
``decode-ring`` in a fresh interpreter with a hook that delivers SIGINT at one point of the
run, the way a terminal would: the signal arrives, and the run must end with status 130 and
nothing on stderr or stdout. The hooks wrap what any version of the package calls (an import,
``Path.open``, a matplotlib call), not its own functions.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NEMOTRON = str(ROOT / "tests" / "configs" / "nemotron-nano-9b-v2.json")
INTERRUPTED = 130

# Sends SIGINT to this process, as Ctrl-C does: the handler runs at the next bytecode.
PRELUDE = """\
import os, signal, sys
def interrupt():
    os.kill(os.getpid(), signal.SIGINT)
"""
# Runs the command line as its console script does: the import, then main().
RUN = """\
from decode_ring.cli import main
sys.exit(main({argv!r}))
"""


def limit_memory() -> None:
    """At most 2 GiB: a read that ignores the interrupt ends in a MemoryError instead."""
    resource.setrlimit(resource.RLIMIT_AS, (2 * 2**30, 2 * 2**30))


def interrupted_run(hook: str, argv: list[str], cwd: Path) -> tuple[int, str, str]:
    code = PRELUDE + textwrap.dedent(hook) + RUN.format(argv=argv)
    env = {k: v for k, v in os.environ.items() if not k.startswith("METRALE_")}
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=cwd,
        preexec_fn=limit_memory,
    )
    return done.returncode, done.stdout, done.stderr


def test_ctrl_c_while_the_commands_load(tmp_path: Path) -> None:
    hook = """\
    import importlib.abc
    class Interrupting(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name == "decode_ring.plan":
                interrupt()
            return None
    sys.meta_path.insert(0, Interrupting())
    """
    assert interrupted_run(hook, ["state", "--config", NEMOTRON], tmp_path) == (
        INTERRUPTED,
        "",
        "",
    )


def test_ctrl_c_while_reading_dev_zero(tmp_path: Path) -> None:
    # Ctrl-C comes 50 ms into the read, from another thread, as a terminal's would: the read
    # must notice it. Each chunk read takes 10 ms more here, so that the read of the 16 MiB
    # the cap allows is still going on then.
    hook = """\
    import pathlib, threading, time
    opened = pathlib.Path.open
    class Slow:
        def __init__(self, stream):
            self.stream = stream
        def __enter__(self):
            threading.Timer(0.05, interrupt).start()
            return self
        def __exit__(self, *exception):
            self.stream.close()
        def read(self, *size):
            data = self.stream.read(*size)
            time.sleep(0.01)
            return data
    def open_(self, *args, **kwargs):
        stream = opened(self, *args, **kwargs)
        return Slow(stream) if str(self) == "/dev/zero" else stream
    pathlib.Path.open = open_
    import atexit
    def peak():  # what the run held at most, in KiB: its own, not its parent's at the fork
        with open("/proc/self/status") as status:
            held = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
        with open("peak", "w") as file:
            file.write(held)
    atexit.register(peak)
    """
    assert interrupted_run(hook, ["state", "--config", "/dev/zero"], tmp_path) == (
        INTERRUPTED,
        "",
        "",
    )
    # The read stopped at the interrupt: it did not go on to the 2 GiB limit first.
    assert int((tmp_path / "peak").read_text()) < 200 * 1024


def test_ctrl_c_while_a_plan_is_computed(tmp_path: Path) -> None:
    hook = """\
    import decode_ring.preflight as preflight
    fitted = preflight.RingSlot.__post_init__
    calls = []
    def post_init(self):
        calls.append(1)
        if len(calls) == 100:  # well into the grid
            interrupt()
        fitted(self)
    preflight.RingSlot.__post_init__ = post_init
    """
    sizes = ",".join(str(size) for size in range(1, 65))
    argv = ["plan", "--ssm-layers", "48", "--per-seq-state", "151.5MiB", "--free", "80GiB"]
    argv += ["--weights", "16GiB", "--tp", sizes, "--max-batch-size", sizes]
    assert interrupted_run(hook, argv, tmp_path) == (INTERRUPTED, "", "")


@pytest.mark.parametrize("where", ["print_png", "draw"])
def test_ctrl_c_while_a_plot_is_drawn_keeps_the_old_picture(tmp_path: Path, where: str) -> None:
    hook = f"""\
    from matplotlib.backends import backend_agg
    drawn = backend_agg.FigureCanvasAgg.{where}
    def interrupted(self, *args, **kwargs):
        interrupt()
        return drawn(self, *args, **kwargs)
    backend_agg.FigureCanvasAgg.{where} = interrupted
    """
    picture = tmp_path / "plan.png"
    picture.write_bytes(b"the previous picture")
    argv = ["plan", "--config", NEMOTRON, "--free", "80GiB", "--weights", "16GiB"]
    argv += ["--max-model-len", "8192", "--plot", str(picture)]
    assert interrupted_run(hook, argv, tmp_path) == (INTERRUPTED, "", "")
    assert picture.read_bytes() == b"the previous picture"
    assert sorted(entry.name for entry in tmp_path.iterdir()) == ["plan.png"]
