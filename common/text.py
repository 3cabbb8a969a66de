"""The one way text that comes from elsewhere (a server's error message, an exception's text, a
client's path or header) is cut down before it is logged, stored in a column or put in an error of
ours: one line, at most a given length, so no foreign message floods a log or a row."""

from __future__ import annotations

MESSAGE_LIMIT = 200
"""Characters of a foreign message kept by default (an error message, a status, a path)."""


def truncate(text: str, limit: int = MESSAGE_LIMIT) -> str:
    """`text` as one line (runs of blanks and line breaks become one space) of at most `limit`
    characters, ending in `…` when it was cut."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
