"""What an upload achieved: the receipt every submit and flush returns."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Receipt"]


@dataclass(frozen=True)
class Receipt:
    """What an upload (or a flush) achieved.

    ``accepted``: reports the server holds from these batches (including batches it had
    already stored: a retry answered as a duplicate); ``batches``: batches acknowledged;
    ``duplicates``: of those, how many the server had already; ``queued``: reports left in
    the offline queue; ``dropped``: reports the bounded queue had to drop; ``rejected``:
    reports of queued batches the server refused for good (on flush; see ``problems``);
    ``skipped``: records not sent because their owner had already reported in this
    collection window (or had an earlier record in the same call); ``window``: the label of
    the collection window the batches were counted in (None: the mechanism has no windows).
    """

    accepted: int = 0
    batches: int = 0
    duplicates: int = 0
    queued: int = 0
    dropped: int = 0
    rejected: int = 0
    batch_ids: tuple[str, ...] = ()
    problems: tuple[str, ...] = field(default=())
    skipped: int = 0
    window: str | None = None

    def __add__(self, other: Receipt) -> Receipt:
        return Receipt(
            self.accepted + other.accepted,
            self.batches + other.batches,
            self.duplicates + other.duplicates,
            self.queued + other.queued,
            self.dropped + other.dropped,
            self.rejected + other.rejected,
            self.batch_ids + other.batch_ids,
            self.problems + other.problems,
            self.skipped + other.skipped,
            self.window if self.window is not None else other.window,
        )
