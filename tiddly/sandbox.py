"""Run a pure function in a child process with a wall-clock and a memory limit (SPEC §15).

Page extraction (trafilatura, pypdf) has no bound of its own: a page of 100 000 links or a PDF
whose pages share one huge content stream costs minutes of CPU and hundreds of MB. `run` sends the
call to a warm worker process and waits at most `seconds`; the worker's address space may grow by
at most `memory_mb` (RLIMIT_AS). Past either limit the worker is killed (or exits) and `run`
raises `LimitExceeded`; the next call gets a fresh worker.

- A worker is a fresh interpreter (`python -m tiddly.sandbox`, talking over two pipes) that
  imports the extraction libraries once: it shares nothing with the web process — no threads,
  locks, database connections, nor the server's `__main__` (which multiprocessing's spawn and
  forkserver methods would run again in the child).
- Idle workers are kept (at most `MAX_IDLE`), so a small page costs a round trip over a pipe;
  starting one costs about 0.3 s of CPU, paid again only after a worker was stopped.
- A worker that grew past `RECYCLE_GROWTH_MB` during a call exits after answering it, so one big
  page does not leave its memory held until the next kill.
- The function and its arguments must pickle (a module-level function, plain data); its result
  and its exceptions come back as they are.
"""

from __future__ import annotations

import contextlib
import os
import resource
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, TypeVar

# What a worker imports before its first call (and before its memory budget is counted).
PRELOAD = ["content.text.page", "content.text.page_markdown", "trafilatura", "pypdf", "lxml.html"]
MAX_IDLE = 2
RECYCLE_GROWTH_MB = 256
START_SECONDS = 60  # a worker's start (imports) on a loaded machine; not part of a call's limit

T = TypeVar("T")


class LimitExceeded(Exception):
    """The call was stopped: `kind` is "time" or "memory" (a worker that died counts as memory)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


# --- the worker (child process) ------------------------------------------------------------------


def _peak_vm() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmPeak:"):
                return int(line.split()[1]) * 1024
    return 0


def _statm_bytes(field: int) -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[field]) * os.sysconf("SC_PAGE_SIZE")


def _serve(inbox: Connection, outbox: Connection, memory_mb: int) -> None:  # pragma: no cover
    # The budget is growth over what the worker holds when it starts (the interpreter and the
    # preloaded libraries), so it means the same whatever those take.
    base_vm = _statm_bytes(0)
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = base_vm + (memory_mb << 20)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    base_rss = _statm_bytes(1)
    outbox.send("ready")  # the first call's time starts now, not while the libraries load
    while True:
        try:
            func, args, kwargs = inbox.recv()
        except (EOFError, OSError):
            return
        try:
            status, value = "ok", func(*args, **kwargs)
        except MemoryError:
            status, value = "memory", None
        except Exception as exc:
            status, value = "raised", exc
        # A C library (libxml2) that cannot allocate may fail quietly ("not readable HTML"):
        # a call that reached the ceiling counts as stopped by it, whatever it answered.
        if status != "memory" and _peak_vm() >= limit - (8 << 20):
            status, value = "memory", None
        # Give the memory back after a heavy call: this worker says so and exits after answering.
        retiring = status == "memory" or _statm_bytes(1) - base_rss > RECYCLE_GROWTH_MB << 20
        try:
            outbox.send((status, value, retiring))
        except MemoryError:
            outbox.send(("memory", None, True))
            return
        except Exception as exc:  # an unpicklable result or exception
            outbox.send(("raised", RuntimeError(f"{type(exc).__name__}: {exc}"), retiring))
        if retiring:
            return


# --- the pool (parent process) -------------------------------------------------------------------


def _main(argv: list[str]) -> None:  # pragma: no cover - the child's entry point
    read_fd, write_fd, memory_mb = (int(a) for a in argv)
    # Linux: die with the web process, even in the middle of a call that never returns.
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, 9)  # PR_SET_PDEATHSIG, SIGKILL
    for name in PRELOAD:
        with contextlib.suppress(ImportError):
            import_module(name)
    _serve(Connection(read_fd, writable=False), Connection(write_fd, readable=False), memory_mb)


_ROOT = str(Path(__file__).resolve().parent.parent)  # the directory that holds `tiddly`


@dataclass
class _Worker:
    process: subprocess.Popen[bytes]
    outbox: Connection  # calls to the worker
    inbox: Connection  # its answers
    memory_mb: int

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> None:
        for conn in (self.outbox, self.inbox):
            with contextlib.suppress(OSError):
                conn.close()
        if self.process.poll() is None:
            self.process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(5)


_lock = threading.Lock()
_idle: list[_Worker] = []


def _start(memory_mb: int) -> _Worker:
    to_child_r, to_child_w = os.pipe()
    to_parent_r, to_parent_w = os.pipe()
    try:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tiddly.sandbox",
                *map(str, (to_child_r, to_parent_w, memory_mb)),
            ],
            pass_fds=(to_child_r, to_parent_w),
            cwd=_ROOT,
            stdin=subprocess.DEVNULL,
        )
    except BaseException:
        for fd in (to_child_w, to_parent_r):
            os.close(fd)
        raise
    finally:
        os.close(to_child_r)
        os.close(to_parent_w)
    worker = _Worker(
        process=process,
        outbox=Connection(to_child_w, readable=False),
        inbox=Connection(to_parent_r, writable=False),
        memory_mb=memory_mb,
    )
    try:
        if not worker.inbox.poll(START_SECONDS) or worker.inbox.recv() != "ready":
            raise RuntimeError(f"the extraction worker did not start within {START_SECONDS} s")
    except BaseException:
        worker.stop()
        raise
    return worker


def _acquire(memory_mb: int) -> _Worker:
    with _lock:
        while _idle:
            worker = _idle.pop()
            if worker.memory_mb == memory_mb and worker.alive():
                return worker
            worker.stop()
    return _start(memory_mb)


def _release(worker: _Worker) -> None:
    with _lock:
        if len(_idle) < MAX_IDLE and worker.alive():
            _idle.append(worker)
            return
    worker.stop()


def shutdown() -> None:
    """Stop the idle workers (tests; a process that is about to exit needs nothing: they are
    daemons)."""
    with _lock:
        workers, _idle[:] = list(_idle), []
    for worker in workers:
        worker.stop()


def run(func: Callable[..., T], *args: Any, seconds: float, memory_mb: int, **kwargs: Any) -> T:
    """``func(*args, **kwargs)`` in a worker process, stopped past ``seconds`` or ``memory_mb``
    (raises `LimitExceeded`); the function's own exceptions are raised here as they are."""
    worker = _acquire(memory_mb)
    try:
        try:
            worker.outbox.send((func, args, kwargs))
        except (BrokenPipeError, EOFError, OSError):
            # An idle worker that died meanwhile (its recycling exit): one fresh try.
            worker.stop()
            worker = _acquire(memory_mb)
            worker.outbox.send((func, args, kwargs))
        if not worker.inbox.poll(seconds):
            raise LimitExceeded("time", f"stopped after {seconds:g} s")
        status, value, retiring = worker.inbox.recv()
    except LimitExceeded:
        worker.stop()
        raise
    except (EOFError, OSError):
        worker.stop()  # it died mid-call: killed by the memory limit, or crashed in C code
        raise LimitExceeded("memory", f"stopped at its memory limit of {memory_mb} MB") from None
    except BaseException:
        worker.stop()
        raise
    if retiring:
        worker.stop()
    else:
        _release(worker)
    if status == "memory":
        raise LimitExceeded("memory", f"stopped at its memory limit of {memory_mb} MB")
    if status == "raised":
        raise value
    return value


if __name__ == "__main__":  # pragma: no cover
    _main(sys.argv[1:])
