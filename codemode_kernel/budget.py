"""What a reader is told when a result is too large to show whole, and where the whole is kept.

A result is cut in two places. The worker sends at most a million bytes of a program's value (its envelope
then says ``truncated``); the rest never leaves the worker, and ``value_cut_note`` says so in words, for
``codemode run``'s text as much as for a model. A front door that promises a model a budget (``codemode
serve``'s ``execute_python``, the agent) cuts the text it sends; ``keep_whole`` stores the uncut text first,
so the marker in the cut can name where to read the rest.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .artifacts import Artifact, ArtifactStore
from .core.errors import ArtifactError

__all__ = ["keep_whole", "value_cut_note"]

_KEEP_IT = "store_artifact(value) in the program keeps all of it, or return a summary"


def value_cut_note(value: Mapping[str, Any] | None) -> str:
    """One line saying the worker cut ``value`` (an envelope) and by how much; "" when it is whole.

    ``codemode run`` (``cli.py``) prints it after the value, as the agent and ``codemode serve`` do.
    """
    if value is None or not value.get("truncated"):
        return ""
    return f"[the value was cut before it left the worker{_how_much(value)}; {_KEEP_IT}]\n"


def _how_much(value: Mapping[str, Any]) -> str:
    kind, size = value.get("kind"), value.get("size")
    if kind == "text" and isinstance(size, int):
        shown = len(str(value.get("text", "")).encode("utf-8", "surrogatepass"))
        return f": {shown:,} of its {size:,} bytes came through"
    if kind == "table" and isinstance(value.get("row_count"), int):
        return f": {len(value.get('rows') or []):,} of its {value['row_count']:,} rows came through"
    if kind == "json" and isinstance(value.get("length"), int):
        return f": only the first part of its {value['length']:,} items came through"
    return f" (it had {size:,} bytes)" if isinstance(size, int) else ""


def keep_whole(store: ArtifactStore, text: str, execution_id: str, *, reader: str) -> Artifact | None:
    """Store ``text``, the whole of a result a reader sees cut, as a text artifact; None if it cannot be.

    ``reader`` says who saw the cut (``"the agent's model"``, ``"the codemode serve client"``), so someone
    browsing the store knows why the artifact is there. A failure to store is not the run's failure: the
    reader still gets the cut text, only without a reference.
    """
    try:
        return store.put(
            text,
            name=f"execute_python-output-{execution_id}",
            type="text/plain",
            description=f"The whole output and value of a program; {reader} got a cut.",
            execution_id=execution_id,
        )
    except ArtifactError:
        return None
