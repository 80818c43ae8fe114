"""HTML for tool calls, results and errors, shared by the live trace widget and the static bundles.

Every string that comes from a tool, a server, a model or the program passes through ``html.escape``:
JupyterLab trusts live outputs, so a tool result carrying ``<img onerror=...>`` would otherwise run
script beside the server's token. Images are only inlined for a few raster MIME types with base64 data.
Containers are shown as nested ``<details>`` (a JSON tree that opens without JavaScript, so it also
works in nbconvert's HTML and on GitHub); lists of records become tables.
"""

from __future__ import annotations

import base64
import binascii
import html
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from ..worker.values import IMAGE_TYPES
from .asked import asked_html

__all__ = [
    "approval_html",
    "approval_text",
    "arguments_text",
    "call_html",
    "code_html",
    "error_html",
    "json_html",
    "note_text",
    "notes_html",
    "progress_bar_html",
    "progress_html",
    "progress_text",
    "result_html",
    "status_badge",
    "table_html",
    "value_html",
]

_MAX_ITEMS = 100  # per level of a JSON tree
_MAX_DEPTH = 8
_MAX_TEXT = 4000
_MAX_ROWS = 50
_MAX_COLUMNS = 20
_INLINE_CHARS = 80  # a nested container this short is shown on one line
_IMAGE_TYPES = frozenset(IMAGE_TYPES)
_AUDIO_TYPES = frozenset({"audio/wav", "audio/x-wav", "audio/mpeg", "audio/ogg", "audio/webm"})
_STATUS_STYLE = {
    "ok": ("#1a7f37", "✓"),
    "running": ("#9a6700", "…"),
    "pending": ("#9a6700", "…"),
    "cancelled": ("#57606a", "■"),  # someone stopped it: not the program's failure, so not red
}
_APPROVAL_COLOR = {"allowed": "#9a6700", "denied": "#cf222e"}  # as a warning, as an error
_SCOPES = {"kernel": "this tool, for this kernel", "session": "this tool, for this session"}
_APPROVAL_CHARS = 300  # the line stays short: ``by`` and ``reason`` come from the record, which may be edited
_PROGRESS_CHARS = 300  # the detail's progress line: the message is the server's, of any length
_ROW_MESSAGE_CHARS = 120  # the message beside a running call's bar
_MONO = "font-family: var(--jp-code-font-family, monospace); font-size: 12px"

esc = html.escape


def status_badge(status: str) -> str:
    """A coloured status word: green for ok, amber for running, grey for cancelled, red for failures."""
    color, mark = _STATUS_STYLE.get(status, ("#cf222e", "✗"))
    return f'<span style="color: {color}; font-weight: 600">{mark} {esc(status)}</span>'


_NOTE_CHARS = 300  # a note's line in a view; the record keeps the whole (bounded) message and data
_NOTES_SHOWN = 20  # notes a view lists (the last ones); the record keeps them all


def note_text(note: Mapping[str, Any]) -> str:
    """One note as a line: its message, then its data as ``key=value`` (JSON values), cut to a line."""
    data = note.get("data") or {}
    fields = " ".join(f"{key}={json.dumps(value, ensure_ascii=False)}" for key, value in data.items())
    return _clip_to(f"{note.get('message', '')}{' · ' + fields if fields else ''}", _NOTE_CHARS)


def notes_html(notes: Sequence[Mapping[str, Any]]) -> str:
    """What the program said with ``notify()``: the last notes, newest last, with a count of the rest."""
    if not notes:
        return ""
    shown = notes[-_NOTES_SHOWN:]
    more = f"<div><i>… {len(notes) - len(shown)} earlier notes</i></div>" if len(notes) > len(shown) else ""
    rows = "".join(f"<li>{esc(note_text(note))}</li>" for note in shown)
    return f'<div class="codemode-notes">notes:{more}<ul style="margin: 0">{rows}</ul></div>'


def code_html(code: str) -> str:
    """Python source, highlighted with inline styles (no stylesheet needed), line numbers kept."""
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import PythonLexer

    formatter = HtmlFormatter(noclasses=True, linenos="inline", nobackground=True)
    return str(highlight(code, PythonLexer(), formatter))


def call_html(call: Mapping[str, Any], *, open_result: bool = False, volatile: bool = True) -> str:
    """One tool call as an expandable row: name(arguments), status, duration; the result inside.

    ``volatile=False`` leaves out what changes from run to run (the duration, an artifact's id), for
    outputs that must read the same on every run: nbval compares a stored notebook's HTML too.
    """
    duration = call.get("duration_ms") if volatile else None
    timing_html = f" <small>{duration:.0f} ms</small>" if isinstance(duration, int | float) else ""
    artifact = call.get("artifact_id")
    seq = call.get("seq")
    number = f'<small style="opacity: 0.7">#{seq}</small> ' if isinstance(seq, int) else ""
    running_bar = progress_bar_html(call.get("progress")) if call.get("status") == "running" else ""
    summary = (
        f"{number}<code>{esc(str(call.get('tool')))}({esc(arguments_text(call.get('arguments')))})</code> "
        f"{status_badge(str(call.get('status')))}{timing_html}"
        f' <small style="opacity: 0.7">{esc(str(call.get("server")))}</small>{running_bar}'
    )
    body = []
    approval = approval_html(call.get("approval"))
    if approval:
        body.append(approval)
    progress = progress_html(call.get("progress"))
    if progress:
        body.append(progress)
    asked = asked_html(call.get("asked"))
    if asked:
        body.append(asked)
    if call.get("error"):
        body.append(f'<pre style="color: #cf222e; {_MONO}">{esc(str(call["error"]))}</pre>')
    if artifact:
        where = f" <code>{esc(str(artifact))}</code>" if volatile else " (see %codemode artifacts)"
        body.append(f"<div>the whole result is stored as an artifact{where}; a preview follows</div>")
    if call.get("result") is not None:
        body.append(result_html(call["result"]))
    for warning in call.get("warnings") or ():
        body.append(f'<div style="color: #9a6700">warning: {esc(str(warning))}</div>')
    opened = " open" if open_result else ""
    inner = "".join(body) or "<i>no result yet</i>"
    return (
        f'<details class="codemode-call"{opened}><summary>{summary}</summary>'
        f'<div style="margin-left: 1.5em">{inner}</div></details>'
    )


def approval_text(approval: Any) -> str:
    """The call's approval on one line, or "" when it needed none.

    ``allowed by the user (once): its server marks it destructive (destructiveHint)``,
    ``denied by the user: ...``, ``denied (no decision in time): ...``. The record may come from an edited
    notebook, so every field is optional and the line is cut short.
    """
    if not isinstance(approval, Mapping) or not any(approval.get(k) for k in ("decision", "by", "reason")):
        return ""
    decision = str(approval.get("decision") or "decided")
    by = str(approval.get("by") or "")
    scope = str(approval.get("scope") or "")
    reason = str(approval.get("reason") or "")
    if by == "timeout":
        who = " (no decision in time)"
    elif by == "nobody":
        who = " (nobody could be asked)"
    else:
        who = f" by {by}" if by else ""
    if decision == "allowed" and scope:
        said = _SCOPES.get(scope, scope)
        # "the user (allowed earlier)" takes the scope inside its own parentheses.
        who = f"{who[:-1]}; {said})" if who.endswith(")") else f"{who} ({said})"
    line = f"{decision}{who}" + (f": {reason}" if reason else "")
    return line if len(line) <= _APPROVAL_CHARS else line[: _APPROVAL_CHARS - 1] + "…"


def approval_html(approval: Any) -> str:
    """The approval line, amber when allowed and red when denied (like the warning and the error); ""."""
    text = approval_text(approval)
    if not text:
        return ""
    decision = str(approval.get("decision"))
    color = _APPROVAL_COLOR.get(decision, _APPROVAL_COLOR["denied"])
    return f'<div class="codemode-approval" style="color: {color}">{esc(text)}</div>'


def _number(value: float) -> str:
    """``5`` for 5.0, ``2.5`` as it is: progress values are floats on the wire, mostly whole."""
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _progress_fields(progress: Any) -> tuple[int, float | None, float | None, str]:
    """(count, progress, total, message) of a record's ``progress``, each None/0/"" when unusable.

    The record may come from an edited notebook: nothing here trusts a field's type.
    """
    if not isinstance(progress, Mapping):
        return 0, None, None, ""

    def number(key: str) -> float | None:
        value = progress.get(key)
        if not isinstance(value, int | float) or isinstance(value, bool):
            return None
        return float(value) if math.isfinite(value) else None  # NaN or infinity: nothing to draw

    count = progress.get("count")
    count = count if isinstance(count, int) and not isinstance(count, bool) and count > 0 else 0
    message = progress.get("message")
    # One line: a message with line breaks would break the text view's layout.
    text = " ".join(message.split()) if isinstance(message, str) else ""
    return count, number("progress"), number("total"), text


def _progress_value(value: float | None, total: float | None) -> str:
    """``3 of 5``, ``3``, or "" when the record holds no usable progress value."""
    if value is None:
        return ""
    return f"{_number(value)} of {_number(total)}" if total is not None else _number(value)


def progress_text(progress: Any) -> str:
    """A finished call's progress on one short line, or "" when its server reported none.

    ``5 updates, last: Oslo: day 5 of 5`` (the last message, else the last value, ``5 of 5``).
    """
    count, value, total, message = _progress_fields(progress)
    last = message or _progress_value(value, total)
    if not count and not last:
        return ""
    parts = [f"{count:,} update{'s' * (count != 1)}"] if count else []
    parts += [f"last: {last}"] if last else []
    line = ", ".join(parts)
    return line if len(line) <= _PROGRESS_CHARS else line[: _PROGRESS_CHARS - 1] + "…"


def progress_html(progress: Any) -> str:
    """The call's detail line ``progress: 5 updates, last: ...`` (muted), or ""."""
    text = progress_text(progress)
    if not text:
        return ""
    return f'<div class="codemode-progress" style="opacity: 0.75">progress: {esc(text)}</div>'


def progress_bar_html(progress: Any) -> str:
    """A running call's bar and the server's last message, for the row of the live view; "" without any.

    A ``<progress>`` with a value is determinate (``value`` of ``total``); without one the browser
    animates it, as for a server that gives no total. The message (or the count) follows, cut short.
    """
    count, value, total, message = _progress_fields(progress)
    if not count and value is None and not message:
        return ""
    if value is not None and total is not None and total > 0:
        fraction = max(0.0, min(1.0, value / total))
        bar = f'<progress value="{fraction:.3f}" max="1"'
    else:
        bar = "<progress"  # indeterminate
    tip = _progress_value(value, total) + (f": {message}" if message else "")
    style = "width: 6em; height: 0.7em; vertical-align: middle; margin: 0 0.4em; accent-color: #9a6700"
    bar += f' title="{esc(_clip_to(tip, 300))}" style="{style}"></progress>'
    words = message or _progress_value(value, total) or f"{count:,} update{'s' * (count != 1)}"
    return f'{bar}<small class="codemode-progress-message">{esc(_clip_to(words, _ROW_MESSAGE_CHARS))}</small>'


def _clip_to(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def arguments_text(arguments: Any) -> str:
    """``city="Oslo", unit="celsius"``: the arguments as they would be written in the call."""
    if not isinstance(arguments, Mapping):
        return ""
    return ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in arguments.items())


def result_html(result: Mapping[str, Any]) -> str:
    """An MCP CallToolResult (wire form): structured content as a tree or table, then each content item."""
    if "preview" in result and "content" not in result:  # kept whole as an artifact: a preview is left
        return f"<pre style='{_MONO}'>{esc(_clip(str(result['preview'])))}</pre>"
    parts = []
    structured = result.get("structuredContent")
    if structured is not None:
        parts.append(json_html(structured))
    for item in result.get("content") or ():
        if structured is not None and item.get("type") == "text":
            continue  # the same data as text, for older clients
        parts.append(_content_html(item))
    return "".join(parts) or "<i>empty result</i>"


def _content_html(item: Mapping[str, Any]) -> str:
    kind = item.get("type")
    if kind == "text":
        text = str(item.get("text", ""))
        try:
            return json_html(json.loads(text))
        except ValueError:
            return f"<pre style='white-space: pre-wrap; {_MONO}'>{esc(_clip(text))}</pre>"
    if kind in ("image", "audio"):
        return _media_html(str(kind), str(item.get("mimeType", "")), item.get("data"))
    if kind == "resource_link":
        name = esc(str(item.get("name", "")))
        return f"<div>resource link: <code>{esc(str(item.get('uri')))}</code> {name}</div>"
    if kind == "resource":
        resource = item.get("resource") or {}
        head = f"<div>resource <code>{esc(str(resource.get('uri')))}</code></div>"
        if "text" in resource:
            return head + f"<pre style='{_MONO}'>{esc(_clip(str(resource['text'])))}</pre>"
        return head
    return json_html(dict(item))


def _media_html(kind: str, mime: str, data: Any) -> str:
    allowed = _IMAGE_TYPES if kind == "image" else _AUDIO_TYPES
    if mime not in allowed or not isinstance(data, str) or not _is_base64(data):
        return f"<div>{esc(kind)} ({esc(mime)}), not shown inline</div>"
    source = f"data:{mime};base64,{data}"
    if kind == "image":
        return f'<img src="{source}" alt="{esc(mime)} image" style="max-width: 480px">'
    return f'<audio controls src="{source}"></audio>'


def _is_base64(data: str) -> bool:
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def json_html(value: Any, depth: int = 0) -> str:
    """A JSON value as a tree of ``<details>`` (top level open); records and rows as a table.

    A small container inside the tree is written out on one line instead of a level to open.
    """
    if depth > 0 and isinstance(value, Mapping | list | tuple):
        compact = json.dumps(value, ensure_ascii=False, default=str)
        if len(compact) <= _INLINE_CHARS:
            return f"<code>{esc(compact)}</code>"
    if isinstance(value, Mapping):
        if not value:
            return "<code>{}</code>"
        items = list(value.items())
        rows = "".join(
            f"<li><b>{esc(str(k))}</b>: {json_html(v, depth + 1)}</li>" for k, v in items[:_MAX_ITEMS]
        )
        label = f"{{…}} {len(items)} key{'s' * (len(items) != 1)}"
        return _tree(label, rows, len(items), depth)
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        items = list(value)
        if not items:
            return "<code>[]</code>"
        table = table_html(items)
        if table is not None:
            return table
        rows = "".join(f"<li>{json_html(v, depth + 1)}</li>" for v in items[:_MAX_ITEMS])
        return _tree(f"[…] {len(items)} item{'s' * (len(items) != 1)}", rows, len(items), depth)
    return f"<code>{esc(_clip(json.dumps(value, ensure_ascii=False, default=str)))}</code>"


def _tree(label: str, rows: str, count: int, depth: int) -> str:
    if depth >= _MAX_DEPTH:
        return f"<code>{esc(label)}</code>"
    more = f"<li><i>… {count - _MAX_ITEMS} more</i></li>" if count > _MAX_ITEMS else ""
    opened = " open" if depth == 0 else ""
    return (
        f"<details{opened}><summary>{esc(label)}</summary>"
        f'<ul style="list-style: none; margin: 0; padding-left: 1.2em">{rows}{more}</ul></details>'
    )


def table_html(items: Sequence[Any], *, max_rows: int = _MAX_ROWS) -> str | None:
    """A table when every item is a flat record (scalars only) and the columns are few.

    Rows of scalars of one length (as SQL results come) make a table without a header.
    """
    if items and all(isinstance(i, list | tuple) for i in items):
        return _rows_html(items, max_rows)
    if not all(isinstance(i, Mapping) for i in items):
        return None
    columns: list[str] = []
    for item in items:
        for key, cell in item.items():
            if isinstance(cell, Mapping | list):
                return None
            if key not in columns:
                columns.append(str(key))
    if not columns or len(columns) > _MAX_COLUMNS:
        return None
    head = "".join(f"<th>{esc(c)}</th>" for c in columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{esc(_cell(item.get(c)))}</td>" for c in columns) + "</tr>"
        for item in items[:max_rows]
    )
    more = f"<div><i>… {len(items) - max_rows} more rows</i></div>" if len(items) > max_rows else ""
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{more}"


def _rows_html(rows: Sequence[Any], max_rows: int) -> str | None:
    width = len(rows[0])
    if not 1 < width <= _MAX_COLUMNS or len(rows) < 2:
        return None
    if any(len(row) != width or any(isinstance(c, Mapping | list) for c in row) for row in rows):
        return None
    body = "".join(
        "<tr>" + "".join(f"<td>{esc(_cell(c))}</td>" for c in row) + "</tr>" for row in rows[:max_rows]
    )
    more = f"<div><i>… {len(rows) - max_rows} more rows</i></div>" if len(rows) > max_rows else ""
    return f"<table><tbody>{body}</tbody></table>{more}"


def _cell(value: Any) -> str:
    return "" if value is None else value if isinstance(value, str) else json.dumps(value)


def value_html(envelope: Mapping[str, Any]) -> str:
    """A program's value (its safe encoding from the executor) as a tree, a table or text."""
    kind = envelope.get("kind")
    if kind == "json":
        return json_html(envelope.get("data"))
    if kind == "text":
        return (
            f"<pre style='white-space: pre-wrap; {_MONO}'>{esc(_clip(str(envelope.get('text', ''))))}</pre>"
        )
    if kind == "table":
        columns = [str(c) for c in envelope.get("columns") or ()]
        rows = envelope.get("rows") or []
        records = [dict(zip(columns, row, strict=False)) for row in rows if isinstance(row, list)]
        table = table_html(records) if records else None
        if table is not None:
            missing = int(envelope.get("row_count") or len(records)) - len(records)
            return table + (f"<div><i>… {missing} more rows</i></div>" if missing > 0 else "")
        count = envelope.get("row_count", "?")
        return f"<code>&lt;table: {esc(str(count))} rows&gt;</code>"
    if kind == "image":
        return _media_html("image", str(envelope.get("mime_type", "")), envelope.get("data"))
    if kind == "repr":
        return f"<pre style='{_MONO}'>{esc(_clip(str(envelope.get('repr', ''))))}</pre>"
    return f"<code>&lt;{esc(str(kind))}&gt;</code>"


def error_html(error: Mapping[str, Any]) -> str:
    """The error with its line and source line, and the traceback folded underneath."""
    where = f"line {error['line']}: " if error.get("line") else ""
    head = f"{where}{error.get('type', 'Error')}: {error.get('message', '')}"
    source = error.get("source_line")
    parts = [f"<b>{esc(head)}</b>"]
    if source:
        parts.append(f"<pre style='{_MONO}; margin: 0.3em 0'>    {esc(str(source).strip())}</pre>")
    if error.get("traceback"):
        parts.append(
            f"<details><summary>traceback</summary><pre style='{_MONO}'>{esc(str(error['traceback']))}</pre>"
            "</details>"
        )
    return f'<div class="codemode-error" style="color: #cf222e">{"".join(parts)}</div>'


def _clip(text: str) -> str:
    return (
        text if len(text) <= _MAX_TEXT else f"{text[:_MAX_TEXT]}… ({len(text) - _MAX_TEXT} more characters)"
    )
