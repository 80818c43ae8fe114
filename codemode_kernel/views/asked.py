"""What a server asked during a call (``CallRecord.asked``), as one line of the trace text and the HTML.

``asked "Booking at X: when?" -> accept by the user: {"date": "2026-12-24", "guests": 4}``,
``asked to open https://... -> decline (nobody could be asked)``, ``sampling allowed by the user ->
16 characters from scripted``. The record may come from an edited notebook: nothing here trusts a field's
type, and every string is escaped in HTML.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from html import escape as esc
from typing import Any

__all__ = ["asked_html", "asked_text"]

_CHARS = 300


def asked_text(asked: Any) -> str:
    """Every question of the call and its answer on one line ("; " between them), or ""."""
    if not isinstance(asked, list):
        return ""
    parts = [_entry(entry) for entry in asked[:10] if isinstance(entry, Mapping)]
    line = "; ".join(part for part in parts if part)
    if len(asked) > 10:
        line += f"; ... {len(asked) - 10} more"
    return line


def asked_html(asked: Any) -> str:
    """The call's detail line ``asked: ...`` (muted), or ""."""
    text = asked_text(asked)
    if not text:
        return ""
    return f'<div class="codemode-asked" style="opacity: 0.75">asked: {esc(text)}</div>'


def _entry(entry: Mapping[str, Any]) -> str:
    kind = entry.get("kind")
    if kind == "sampling":
        return _sampling(entry)
    if kind != "elicitation":
        return ""
    if entry.get("refused"):
        return _cut(f"a question that was refused: {entry['refused']}")
    question, answer = _part(entry, "question"), _part(entry, "answer")
    if question.get("mode") == "url":
        what = f"to open {question.get('url')} ({_short(question.get('message'))})"
    else:
        what = json.dumps(_short(question.get("message")), ensure_ascii=False)
    action = str(answer.get("action") or "?")
    by = str(answer.get("by") or "")
    who = " (nobody could be asked)" if by == "nobody" else (f" by {by}" if by else "")
    content = answer.get("content")
    shown = f": {json.dumps(content, ensure_ascii=False)}" if isinstance(content, Mapping) and content else ""
    return _cut(f"{what} -> {action}{who}{shown}")


def _sampling(entry: Mapping[str, Any]) -> str:
    if entry.get("refused"):
        return _cut(f"the model (sampling), refused: {entry['refused']}")
    allowed, answer = _part(entry, "allowed"), _part(entry, "answer")
    by = f" allowed by {allowed.get('by')}" if allowed.get("by") else ""
    return _cut(
        f"the model (sampling){by} -> {answer.get('chars', '?')} characters from {answer.get('model', '?')}"
    )


def _part(entry: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = entry.get(key)
    return value if isinstance(value, Mapping) else {}


def _short(text: Any) -> str:
    words = " ".join(str(text or "").split())
    return words if len(words) <= 120 else words[:119] + "…"


def _cut(line: str) -> str:
    return line if len(line) <= _CHARS else line[: _CHARS - 1] + "…"
