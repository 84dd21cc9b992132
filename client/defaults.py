"""Safe defaults of the client: memoisation on, in a state file under the user's data folder; owners
required for a batch of several records.

``Client(url)`` memoises by default in :func:`default_state_path` — the platform's per-user
data folder, as applications keep their data there (:func:`rldp.shared.paths.user_data_dir`):

* Windows: ``%APPDATA%\\rldp\\client-state.sqlite3``;
* macOS: ``~/Library/Application Support/rldp/client-state.sqlite3``;
* elsewhere: ``$XDG_DATA_HOME/rldp/client-state.sqlite3``, ``~/.local/share/rldp/…`` when
  XDG_DATA_HOME is unset or not absolute (the XDG Base Directory rule).

Why by default: without a memo every app start sends a fresh draw of the same record, and
an aggregator that links a user's reports averages them (the demo's averaging attack guesses
sex for 98 % of users after 30 reports). ``Client(url, state_path=None)`` turns memoisation
off, and must say so.

With memoisation, records without owners are all the device owner's: a batch of several
people's records under one owner would share one draw per distinct record value: identical
records would report identically, and the estimate would be badly wrong without any warning.
So :func:`require_owners` refuses a submit of more than one record without ``owners``
(:class:`OwnersRequired`); ``owners="me"`` (one string) says they really are one person's.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from rldp.shared.errors import RldpError
from rldp.shared.paths import user_data_dir

__all__ = ["DEFAULT_STATE", "DefaultState", "OwnersRequired", "default_state_path", "require_owners", "STATE_FILE"]

#: The state file's name in the data folder.
STATE_FILE = "client-state.sqlite3"


class DefaultState:
    """The type of :data:`DEFAULT_STATE`: "memoise in the user's data folder" (``Client``'s default)."""

    def __repr__(self) -> str:
        return "DEFAULT_STATE"


#: ``Client(state_path=DEFAULT_STATE)``, the default: the state file at :func:`default_state_path`.
DEFAULT_STATE = DefaultState()


class OwnersRequired(RldpError, ValueError):
    """A memoised submit of several records without ``owners``: whose record is each one?"""


def default_state_path(platform: str = sys.platform, environ: os._Environ[str] | dict[str, str] | None = None) -> Path:
    """The default state file of this user on ``platform`` (see the module docstring)."""
    return user_data_dir(platform, environ) / STATE_FILE


def require_owners(n_records: int, owners: object, memoised: bool, windowed: bool = False) -> None:
    """Refuse (:class:`OwnersRequired`) a memoised batch of more than one record that names no owners.

    Its advice is what works for the mechanism: ``state_path=None`` only when it has no collection
    window (a windowed mechanism needs the state file: a stateless client is refused for it)."""
    if memoised and owners is None and n_records > 1:
        off = (
            "; memoisation cannot be turned off for this mechanism: it collects by window"
            if windowed
            else ", or Client(url, state_path=None) to draw afresh"
        )
        raise OwnersRequired(
            f"{n_records} records and no owners: with memoisation (the default state file) every record would be "
            "one person's and identical records would share one draw; give owners=[one id per record] or "
            f"owners='<id>' if they are all one person's{off}"
        )
