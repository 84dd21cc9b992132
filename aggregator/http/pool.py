"""Threads that run calls handed over from an asyncio event loop (the buffering front's).

Why not ``loop.run_in_executor``: per request it chains a concurrent and an asyncio future
(two futures, four callbacks, a condition variable), which the profile of a 10,000-report
upload showed as a third of the front's event-loop time. Here the loop's own future is
resolved by one ``call_soon_threadsafe`` from the thread.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["ThreadPool"]


class ThreadPool:
    """``threads`` threads running calls handed over from the event loop (see the module docstring)."""

    def __init__(self, threads: int, name: str) -> None:
        self._work: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._threads = [
            threading.Thread(target=self._run, name=f"{name}_{k}", daemon=True) for k in range(max(1, threads))
        ]
        for t in self._threads:
            t.start()

    def submit(self, fn: Callable[[Any], Any], arg: Any) -> asyncio.Future[Any]:
        """Run ``fn(arg)`` in a thread; a future of the running loop with its result."""
        loop = asyncio.get_running_loop()
        fut = loop.create_future()
        self._work.put((loop, fut, fn, arg))
        return fut

    def _run(self) -> None:
        while True:
            item = self._work.get()
            if item is None:
                return
            loop, fut, fn, arg = item
            try:
                result, error = fn(arg), None
            except BaseException as exc:  # handed to the awaiting request, as an executor would
                result, error = None, exc
            try:
                loop.call_soon_threadsafe(_resolve, fut, result, error)
            except RuntimeError:  # the loop is closed: the worker is gone, nobody awaits this
                pass

    def shutdown(self, wait: bool = False) -> None:
        """Stop the threads once the calls already handed over are done (``wait``: join them)."""
        for _ in self._threads:
            self._work.put(None)
        if wait:
            for t in self._threads:
                t.join()


def _resolve(fut: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if fut.cancelled():
        return
    if error is not None:
        fut.set_exception(error)
    else:
        fut.set_result(result)
