"""A bounded, in-process limit on failed dashboard logins per client address.

At most :data:`MAX_FAILURES` failed logins per address in any :data:`WINDOW_SECONDS`: beyond
that the login form answers 429 with ``Retry-After`` (the seconds until the oldest failure
leaves the window) and checks no token, so guessing tokens costs a minute per ten guesses.
A successful login does not clear the count (a read token must not buy more guesses at the
admin one). Memory is bounded: at most :data:`MAX_ADDRESSES` addresses are tracked, the least
recently failed dropped first. Per process: each ``rldp serve`` worker keeps its own count, so
the bound across a server is workers × MAX_FAILURES a window. The address is the peer's
(``REMOTE_ADDR``); behind a reverse proxy every client shares the proxy's, which errs toward
limiting, never toward letting more guesses through.
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable

from flask import Flask

__all__ = ["MAX_FAILURES", "WINDOW_SECONDS", "MAX_ADDRESSES", "LoginThrottle", "login_throttle"]

MAX_FAILURES = 10
WINDOW_SECONDS = 60.0
MAX_ADDRESSES = 10_000
_KEY = "rldp.dashboard.login_throttle"


class LoginThrottle:
    """Failed-login times per address (thread-safe); ``clock`` is monotonic seconds."""

    def __init__(
        self,
        max_failures: int = MAX_FAILURES,
        window: float = WINDOW_SECONDS,
        max_addresses: int = MAX_ADDRESSES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_failures, self.window, self.max_addresses, self.clock = max_failures, window, max_addresses, clock
        self._failures: OrderedDict[str, deque[float]] = OrderedDict()
        self._lock = threading.Lock()

    def _recent(self, address: str, now: float) -> deque[float] | None:
        times = self._failures.get(address)
        if times is None:
            return None
        while times and times[0] <= now - self.window:
            times.popleft()
        if not times:
            del self._failures[address]
            return None
        return times

    def retry_after(self, address: str) -> int | None:
        """Whole seconds until ``address`` may try again, or None if it may try now."""
        with self._lock:
            now = self.clock()
            times = self._recent(address, now)
            if times is None or len(times) < self.max_failures:
                return None
            return max(1, math.ceil(times[0] + self.window - now))

    def failed(self, address: str) -> None:
        """Record one failed login from ``address``."""
        with self._lock:
            now = self.clock()
            times = self._recent(address, now)
            if times is None:
                times = self._failures[address] = deque(maxlen=self.max_failures)
            times.append(now)
            self._failures.move_to_end(address)
            while len(self._failures) > self.max_addresses:
                self._failures.popitem(last=False)


def login_throttle(app: Flask) -> LoginThrottle:
    """The app's throttle (created on first use)."""
    throttle = app.extensions.get(_KEY)
    if throttle is None:
        throttle = app.extensions.setdefault(_KEY, LoginThrottle())
    return throttle
