"""``rldp demo``: many simulated users on real census data, end to end.

:mod:`.simulation` runs it (public data → design → publish → users → estimate → report);
:mod:`.config` (DemoConfig), :mod:`.designs` (the aggregator's design and choice),
:mod:`.server` (the aggregator service), :mod:`.users` (worker processes running the
client SDK), :mod:`.console` (progress and the printed report).
"""

from __future__ import annotations

from .config import DemoConfig
from .server import DemoError
from .simulation import predicted_l1_bound, run_demo

__all__ = ["DemoConfig", "DemoError", "run_demo", "predicted_l1_bound"]
