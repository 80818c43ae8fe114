"""The end of a server's stderr log, made safe to show: the reason a server gave for not starting.

A server that exits during start-up usually says why on stderr ("API key not set"). Doctor, ``%codemode
status`` and the sidebar show the last few lines of what it wrote during that start. The text is the
server's, so it is treated as hostile: only the bytes written since the start are read (at most
``READ_BYTES``), terminal escape sequences and other control characters are removed, each line is cut to
``LINE_CHARS`` characters, and secrets are masked: the values of the server's own ``env`` (its keys and
tokens) and anything that looks like a credential (``token=...``, ``Bearer ...``, long random strings).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

__all__ = ["LINES", "LINE_CHARS", "READ_BYTES", "log_size", "read_log_tail", "safe_line"]

LINES = 5
"""How many lines of the log are shown at most."""
LINE_CHARS = 160
"""How long a shown line may be; a longer one is cut and ends with an ellipsis."""
READ_BYTES = 16 * 1024
"""How much of the end of the log is read (a server may write megabytes on one line)."""

MASK = "***"
_MIN_SECRET = 6  # shorter env values ("1", "true", "dev") are too common to mask in the text

_ESCAPE = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)?|[@-Z\\-_])")
"""A terminal escape sequence: CSI (colours, cursor), OSC (titles, links), or a two-byte escape."""
_CREDENTIALS = (
    (re.compile(r"(?i)\b(bearer|basic|token)(\s+)[A-Za-z0-9._~+/=-]{8,}"), r"\1\2***"),
    (
        re.compile(
            r"(?i)((?:api[_-]?key|apikey|access[_-]?key|secret|token|password|passwd|credential)"
            r"[A-Za-z0-9_-]*[\"']?\s*[=:]\s*)[\"']?[^\s\"',;]{4,}[\"']?"
        ),
        r"\1***",
    ),
    (re.compile(r"(://[^/\s:@]+:)[^/\s@]+(@)"), r"\1***\2"),  # a password in a URL
)
_RANDOM = re.compile(r"[A-Za-z0-9_+=-]{24,}")
"""A long unbroken run of token characters: masked when it mixes letters and digits (keys, JWTs)."""


def log_size(path: Path | None) -> int:
    """The log's size now (0 when it does not exist): where the next start's output begins."""
    if path is None:
        return 0
    try:
        return path.stat().st_size
    except OSError:
        return 0


def read_log_tail(path: Path, *, since: int = 0, secrets: Iterable[str] = ()) -> tuple[str, ...]:
    """The last ``LINES`` non-empty lines written to ``path`` after byte ``since``, each made safe.

    ``since`` is the log's size when the server was started (``log_size``): what an earlier start wrote
    is not this start's reason. A log that is smaller now was rotated, and is read from its beginning.
    ``secrets`` are masked wherever they appear (the server's ``env`` values). Empty when nothing can be
    read.
    """
    try:
        with open(path, "rb") as file:
            size = os.fstat(file.fileno()).st_size
            start = since if since <= size else 0
            start = max(start, size - READ_BYTES)
            file.seek(start)
            data = file.read(size - start)
    except OSError:
        return ()
    lines = data.decode("utf-8", errors="replace").splitlines()
    if start > since and lines:
        lines = lines[1:]  # read from the middle of a line: its end alone says little
    masked = sorted({s for s in secrets if len(s) >= _MIN_SECRET}, key=len, reverse=True)
    shown = [safe_line(line, masked) for line in lines]
    return tuple([line for line in shown if line][-LINES:])


def safe_line(line: str, secrets: Iterable[str] = ()) -> str:
    """One line of a server's output, safe to show: no control characters, secrets masked, cut short."""
    line = _ESCAPE.sub("", line)
    line = "".join(ch if ch.isprintable() else " " for ch in line)
    for secret in secrets:
        line = line.replace(secret, MASK)
    for pattern, replacement in _CREDENTIALS:
        line = pattern.sub(replacement, line)
    line = _RANDOM.sub(_mask_random, line)
    line = " ".join(line.split())
    return line if len(line) <= LINE_CHARS else line[: LINE_CHARS - 1] + "…"


def _mask_random(match: re.Match[str]) -> str:
    text = match.group(0)
    if any(ch.isdigit() for ch in text) and any(ch.isalpha() for ch in text):
        return MASK
    return text
