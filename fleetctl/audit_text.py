"""What an audit record's free text may hold: `fleet org`'s `--reason` and `--by`.

The record is read later by people, in a terminal, a page or a report, so its text must show what
it says: nothing invisible and nothing that changes the direction or the layout of what follows.
The rule, by Unicode general category (`unicodedata.category`):

- refused everywhere: Cc (C0 controls, DEL, C1 controls) but tab and line feed in a reason; Cf (format
  characters: the bidi embeddings, overrides and isolates U+202A to U+202E and U+2066 to U+2069, the marks
  U+200E/U+200F/U+061C, zero-width space U+200B, word joiner, soft hyphen, byte order mark) but
  zero-width non-joiner and joiner (U+200C, U+200D), which scripts and emoji sequences need; Zl and
  Zp (line and paragraph separators); Cs, Co and Cn (surrogates, private use, unassigned);
- the text must hold at least one visible character: one that is neither whitespace nor U+200C/U+200D
  (so a text of only joiners and spaces is refused as empty).
"""

from __future__ import annotations

import unicodedata

_REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"})
_JOINERS = frozenset({"\u200c", "\u200d"})


def refusal(text: str, *, multiline: bool) -> str:
    """Why `text` may not be kept ('' when it may); `multiline` allows tab and line feed."""
    allowed = frozenset("\t\n") if multiline else frozenset()
    for ch in text:
        if ch in allowed or ch in _JOINERS:
            continue
        category = unicodedata.category(ch)
        if category in _REFUSED_CATEGORIES:
            name = unicodedata.name(ch, "unnamed")
            return (
                f"holds U+{ord(ch):04X} ({name}, category {category}):"
                " invisible or direction-changing characters are refused"
            )
    if all(ch.isspace() or ch in _JOINERS for ch in text):
        return "holds no visible character"
    return ""
