"""The REST handlers under ``/codemode/api/kernels/<kernel id>/``: state, artifacts, history.

Every handler is authenticated as any Jupyter API (token or cookie) and authorized for reading kernels
(``auth_resource = "kernels"``), so a server's authorizer applies to the sidebar as to the kernel list.
File and database reads run on a thread: the server's loop keeps answering while a workspace is busy.

    GET state                 the kernel's state file (404 when the kernel has none)
    GET artifacts             {"artifacts": [{id, name, type, description, size, created, execution_id}]}
    GET artifacts/<id>        the bytes (?download=1: as an attachment); see artifacts.py for the headers
    GET history               {"runs": [summary, ...]} newest first, every kernel of the workspace
    GET history/<run id>      the whole run record, with the bundle the cell showed
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler
from jupyter_server.utils import url_path_join
from tornado import web

from ..core.errors import ArtifactError
from ..kernel.run_files import valid_run_id
from .artifacts import WorkspaceArtifacts, valid_artifact_id
from .history import HistoryIndex, read_run
from .states import KernelStates, valid_kernel_id

__all__ = ["API_PATH", "setup_handlers"]

API_PATH = "codemode/api"
_KERNEL = r"kernels/(?P<kernel_id>[^/]+)"


class _Handler(APIHandler):
    """What every handler shares: the kernel states, the artifact stores, the history index."""

    auth_resource = "kernels"

    def initialize(self, states: KernelStates, artifacts: WorkspaceArtifacts, history: HistoryIndex) -> None:
        self.states = states
        self.artifacts = artifacts
        self.history = history

    def checked_kernel_id(self, kernel_id: str) -> str:
        """The id, or a 400 before anything is looked up for it."""
        if not valid_kernel_id(kernel_id):
            raise web.HTTPError(400, "not a kernel id")
        return kernel_id

    async def workspace(self, kernel_id: str) -> Path:
        """The kernel's workspace from its state file (or the last one read while it restarts); else 404."""
        kernel_id = self.checked_kernel_id(kernel_id)
        workspace = await asyncio.to_thread(self.states.workspace, kernel_id)
        if workspace is None:
            raise web.HTTPError(404, f"kernel {kernel_id} has no Code Mode state (not a Code Mode kernel?)")
        return workspace


class StateHandler(_Handler):
    """The kernel's servers and tools, as its state file says now."""

    @web.authenticated
    @authorized
    async def get(self, kernel_id: str) -> None:
        kernel_id = self.checked_kernel_id(kernel_id)
        state = await asyncio.to_thread(self.states.current, kernel_id)
        if state is None:
            raise web.HTTPError(
                404, f"kernel {kernel_id} has no Code Mode state file (not a Code Mode kernel, or starting)"
            )
        self.finish(json.dumps(state))


class ArtifactsHandler(_Handler):
    """The workspace's artifacts, newest first."""

    @web.authenticated
    @authorized
    async def get(self, kernel_id: str) -> None:
        workspace = await self.workspace(kernel_id)
        try:
            listing = await asyncio.to_thread(self.artifacts.listing, workspace)
        except ArtifactError as exc:
            raise web.HTTPError(500, f"the artifact store cannot be read: {exc}") from None
        self.finish(json.dumps({"artifacts": listing}))


class ArtifactHandler(_Handler):
    """One artifact's bytes, never as a type a browser would run (artifacts.py)."""

    @property
    def content_security_policy(self) -> str:
        return super().content_security_policy + "; sandbox"

    @web.authenticated
    @authorized
    async def get(self, kernel_id: str, artifact_id: str) -> None:
        workspace = await self.workspace(kernel_id)
        if not valid_artifact_id(artifact_id):
            raise web.HTTPError(400, "not an artifact id")
        download = self.get_argument("download", "0") not in ("", "0", "false")
        try:
            body = await asyncio.to_thread(self.artifacts.body, workspace, artifact_id, download=download)
        except ArtifactError as exc:
            raise web.HTTPError(500, str(exc)) from None
        if body is None:
            raise web.HTTPError(404, f"no artifact with the id {artifact_id}")
        self.set_header("X-Content-Type-Options", "nosniff")
        self.set_header("Content-Disposition", body.disposition)
        self.set_header("Cache-Control", "private, no-store")
        self.finish(body.data, set_content_type=body.content_type)


class HistoryHandler(_Handler):
    """Every run of the workspace, newest first (summaries)."""

    @web.authenticated
    @authorized
    async def get(self, kernel_id: str) -> None:
        workspace = await self.workspace(kernel_id)
        runs = await asyncio.to_thread(self.history.runs, workspace)
        self.finish(json.dumps({"runs": runs}))


class RunHandler(_Handler):
    """One run's whole record."""

    @web.authenticated
    @authorized
    async def get(self, kernel_id: str, run_id: str) -> None:
        workspace = await self.workspace(kernel_id)
        if not valid_run_id(run_id):
            raise web.HTTPError(400, "not a run id")
        record = await asyncio.to_thread(read_run, workspace, run_id)
        if record is None:
            raise web.HTTPError(404, f"no run with the id {run_id}")
        self.finish(record)


def setup_handlers(serverapp: Any) -> None:
    """Route ``/codemode/api/kernels/...`` on the server's web application."""
    kernel_manager = serverapp.kernel_manager

    def directory_of(kernel_id: str) -> Path:
        """The kernel's connection file's directory (the runtime directory, unless configured else)."""
        known = kernel_id in kernel_manager  # get_kernel answers an unknown id with an HTTP 404
        connection_file = kernel_manager.get_kernel(kernel_id).connection_file if known else None
        return Path(connection_file).parent if connection_file else Path(kernel_manager.connection_dir)

    shared: dict[str, Any] = {
        "states": KernelStates(directory_of),
        "artifacts": WorkspaceArtifacts(),
        "history": HistoryIndex(),
    }
    base = url_path_join(serverapp.web_app.settings["base_url"], API_PATH, _KERNEL)
    routes = [
        ("state", StateHandler),
        ("artifacts", ArtifactsHandler),
        (r"artifacts/(?P<artifact_id>[^/]+)", ArtifactHandler),
        ("history", HistoryHandler),
        (r"history/(?P<run_id>[^/]+)", RunHandler),
    ]
    serverapp.web_app.add_handlers(
        ".*$", [(url_path_join(base, route), handler, shared) for route, handler in routes]
    )
