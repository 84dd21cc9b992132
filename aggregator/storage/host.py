"""What the storage mixins (collections, labels, upload credentials) need of :class:`~.base.Storage`, declared
once: its dialect's statements, its connection, its guard and its write transaction."""

from __future__ import annotations

from typing import Any

__all__ = ["StorageHost"]


class StorageHost:
    """The base of every mixin of :class:`~.base.Storage`; Storage (and its dialects) implement these."""

    def _sql(self, text: str) -> str:  # pragma: no cover - Storage's
        raise NotImplementedError

    def _guard(self) -> Any:  # pragma: no cover - Storage's
        raise NotImplementedError

    def _connection(self) -> Any:  # pragma: no cover - Storage's
        raise NotImplementedError

    def write_transaction(self) -> Any:  # pragma: no cover - Storage's
        raise NotImplementedError
