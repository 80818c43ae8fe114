"""The workspace's artifacts in the kernel: the ``artifacts`` object and the browser widget.

``artifacts`` is the same store the programs use (``.codemode/artifacts.db``), read from the kernel:
``artifacts["summary"]`` loads a value, ``artifacts.browse()`` (or ``%codemode artifacts``) opens the
browser: a list, a preview by type (JSON tree, table from CSV, text, image) and a button that loads the
selected artifact into the namespace. Previews treat every type label as untrusted (a program chose it):
HTML and SVG are shown as text, never rendered.
"""

from __future__ import annotations

import base64
import csv
import io
import json
import keyword
import re
from collections.abc import Callable
from html import escape as esc
from typing import Any

from ..artifacts import Artifact, ArtifactInfo, ArtifactStore
from ..worker.values import IMAGE_TYPES
from .markdown import NO_TEX_CLASS
from .render import json_html, table_html

__all__ = ["ArtifactBrowser", "KernelArtifacts", "artifact_listing_text", "preview_html"]

_PREVIEW_BYTES = 2 * 1024 * 1024  # larger artifacts are described, not read, for a preview
_PREVIEW_TEXT = 4000
_PREVIEW_ROWS = 50
_IMAGE_TYPES = frozenset(IMAGE_TYPES)


class KernelArtifacts:
    """The ``artifacts`` object: look up, load, store and browse the workspace's artifacts."""

    def __init__(self, store: Callable[[], ArtifactStore], namespace: dict[str, Any]) -> None:
        self._store = store
        self._namespace = namespace

    @property
    def store(self) -> ArtifactStore:
        """The underlying ArtifactStore (opened on first use)."""
        return self._store()

    def list(self, *, name: str | None = None, limit: int | None = None) -> list[ArtifactInfo]:
        """Artifacts' metadata, newest first (only those named ``name`` when given).

        The dicts a program's ``list_artifacts()`` gives, so that code works in both.
        """
        return [ArtifactInfo.of(artifact) for artifact in self.store.list(name=name, limit=limit)]

    def get(self, id_or_name: str) -> ArtifactInfo:
        """The metadata of an artifact, by id or (the newest with a) name, as ``list()`` gives it."""
        return ArtifactInfo.of(self.store.get(id_or_name))

    def load(self, id_or_name: str) -> Any:
        """The value an artifact holds (JSON parsed, CSV as a DataFrame, text as str, else bytes)."""
        return self.store.load(id_or_name)

    def __getitem__(self, id_or_name: str) -> Any:
        return self.load(id_or_name)

    def put(
        self, data: Any, *, name: str | None = None, type: str | None = None, description: str = ""
    ) -> ArtifactInfo:
        """Store a value from the kernel, as a program's ``store_artifact`` would; its metadata."""
        return ArtifactInfo.of(self.store.put(data, name=name, type=type, description=description))

    def browse(self) -> ArtifactBrowser:
        """The browser widget (what ``%codemode artifacts`` shows)."""
        return ArtifactBrowser(self.store, self._namespace)

    def __len__(self) -> int:
        return len(self.store)

    def __repr__(self) -> str:
        return artifact_listing_text(self.store.list())

    def _repr_html_(self) -> str:
        return listing_html(self.store.list())


def artifact_listing_text(artifacts: list[Artifact]) -> str:
    """A plain-text table: name, type, size, description (ids and times last, as they change)."""
    lines = [f"{len(artifacts)} artifact{'s' * (len(artifacts) != 1)}"]
    for a in artifacts:
        description = f"  {a.description}" if a.description else ""
        lines.append(f"  {a.name or '(unnamed)'}  {a.type}  {size_text(a.size)}{description}  [{a.id}]")
    return "\n".join(lines)


def listing_html(artifacts: list[Artifact]) -> str:
    """The same as a table, every field escaped."""
    rows = [
        {
            "name": a.name or "(unnamed)",
            "type": a.type,
            "size": size_text(a.size),
            "description": a.description,
            "created": a.created[:19].replace("T", " "),
            "id": a.id,
        }
        for a in artifacts
    ]
    count = f"{len(artifacts)} artifact{'s' * (len(artifacts) != 1)}"
    table = table_html(rows, max_rows=200) or ""
    return f'<div class="codemode-artifacts {NO_TEX_CLASS}"><b>{count}</b>{table}</div>'


def size_text(size: int) -> str:
    """``812 B``, ``3.4 KB``, ``1.2 MB``."""
    if size < 1000:
        return f"{size} B"
    if size < 1000**2:
        return f"{size / 1000:.1f} KB"
    return f"{size / 1000**2:.1f} MB"


def preview_html(artifact: Artifact, read: Callable[[], bytes]) -> str:
    """A preview by type; ``read`` is only called when the artifact is small enough to show."""
    head = (
        f"<div><b>{esc(artifact.name or '(unnamed)')}</b> <code>{esc(artifact.id)}</code> · "
        f"{esc(artifact.type)} · {size_text(artifact.size)}"
        + (f" · {esc(artifact.description)}" if artifact.description else "")
        + "</div>"
    )
    if artifact.size > _PREVIEW_BYTES:
        return head + "<div><i>too large to preview; load it into the namespace</i></div>"
    data = read()
    kind = artifact.type.split(";")[0].strip().lower()
    if kind == "application/json":
        try:
            return head + json_html(json.loads(data))
        except ValueError:
            pass
    if kind == "text/csv":
        table = _csv_table(data)
        if table is not None:
            return head + table
    if kind in _IMAGE_TYPES:
        encoded = base64.b64encode(data).decode("ascii")
        return (
            head
            + f'<img src="data:{kind};base64,{encoded}" alt="{esc(artifact.name or "")}"'
            + ' style="max-width: 480px">'
        )
    if kind.startswith("text/") or kind in ("application/json", "image/svg+xml", "application/xml"):
        text = data.decode("utf-8", errors="replace")
        clipped = text if len(text) <= _PREVIEW_TEXT else text[:_PREVIEW_TEXT] + "…"
        return head + f"<pre style='white-space: pre-wrap'>{esc(clipped)}</pre>"
    return head + f"<pre>{esc(data[:256].hex(' '))}{' …' if len(data) > 256 else ''}</pre>"


def _csv_table(data: bytes) -> str | None:
    try:
        reader = csv.DictReader(io.StringIO(data.decode("utf-8")))
        rows = [row for _, row in zip(range(_PREVIEW_ROWS + 1), reader, strict=False)]
    except (UnicodeDecodeError, csv.Error):
        return None
    return table_html(rows, max_rows=_PREVIEW_ROWS) if rows else None


def variable_name(artifact: Artifact) -> str:
    """A Python name to load an artifact as: its name made an identifier, else ``artifact_<id>``."""
    base = re.sub(r"\W+", "_", artifact.name or "").strip("_").lower()
    if not base or base[0].isdigit() or keyword.iskeyword(base):
        base = f"artifact_{artifact.id}" if not base else f"a_{base}"
    return base


class ArtifactBrowser:
    """A list of the artifacts, a preview of the selected one, and "load into the namespace"."""

    def __init__(self, store: ArtifactStore, namespace: dict[str, Any]) -> None:
        import ipywidgets as widgets

        self._store = store
        self._namespace = namespace
        self._header = widgets.HTML()
        self._list = widgets.Select(options=[], rows=8, layout=widgets.Layout(width="100%"))
        self._preview = widgets.HTML()
        self._preview.add_class("codemode-artifact-preview")
        self._as = widgets.Text(description="as", layout=widgets.Layout(width="16em"))
        self._load = widgets.Button(description="Load into namespace", icon="download")
        self._refresh = widgets.Button(description="Refresh", icon="refresh")
        self._status = widgets.HTML()
        self.root = widgets.VBox(
            [
                self._header,
                self._list,
                widgets.HBox([self._as, self._load, self._refresh]),
                self._status,
                self._preview,
            ]
        )
        self.root.add_class("codemode-artifacts")
        self._artifacts: list[Artifact] = []
        self._list.observe(self._on_select, names="value")
        self._load.on_click(lambda _: self.load_selected())
        self._refresh.on_click(lambda _: self.refresh())
        self.refresh()

    def refresh(self) -> None:
        """Re-read the list (programs may have stored more since)."""
        self._artifacts = self._store.list()
        self._header.value = (
            f"<b>{len(self._artifacts)} artifact{'s' * (len(self._artifacts) != 1)}</b> in the workspace"
        )
        self._list.options = [(_label(a), a.id) for a in self._artifacts]
        if self._artifacts and self._list.value is None:
            self._list.value = self._artifacts[0].id
        elif not self._artifacts:
            self._preview.value = "<i>no artifacts yet: programs store them with store_artifact()</i>"

    def select(self, artifact_id: str) -> None:
        """Select an artifact (as a click in the list does)."""
        self._list.value = artifact_id

    def load_selected(self) -> str | None:
        """Load the selected artifact into the namespace under the name in the box; returns the name."""
        artifact = self._selected()
        if artifact is None:
            return None
        name = self._as.value.strip() or variable_name(artifact)
        if not name.isidentifier() or keyword.iskeyword(name):
            self._status.value = f"<span style='color: #cf222e'>{esc(name)!s} is not a Python name</span>"
            return None
        value = self._store.load(artifact.id)
        self._namespace[name] = value
        label, kind = esc(artifact.name or artifact.id), esc(type(value).__name__)
        self._status.value = f"loaded <code>{label}</code> as <code>{esc(name)}</code> ({kind})"
        return name

    def _selected(self) -> Artifact | None:
        return next((a for a in self._artifacts if a.id == self._list.value), None)

    def _on_select(self, _: Any) -> None:
        artifact = self._selected()
        if artifact is None:
            return
        self._as.value = variable_name(artifact)
        self._status.value = ""
        self._preview.value = preview_html(artifact, lambda: self._store.read_bytes(artifact.id))

    def _repr_mimebundle_(self, **_: Any) -> dict[str, Any]:
        view = {"version_major": 2, "version_minor": 0, "model_id": self.root.model_id}
        return {
            "application/vnd.jupyter.widget-view+json": view,
            "text/plain": artifact_listing_text(self._artifacts),
            "text/html": listing_html(self._artifacts),
        }


def _label(artifact: Artifact) -> str:
    created = artifact.created[:19].replace("T", " ")
    return f"{artifact.name or '(unnamed)'} · {artifact.type} · {size_text(artifact.size)} · {created}"
