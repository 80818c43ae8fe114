"""The workspace's artifacts as MCP resources, so a client reads a large result a program kept.

Programs keep data with ``store_artifact(...)``, and a tool result larger than ``artifactThresholdBytes``
becomes an artifact on its own; the result record then carries only the artifact's id. Through
``resources/list`` (newest first, paged), ``resources/read`` and the template ``artifact://{id_or_name}``,
an MCP host can fetch that data when it needs it instead of receiving it inline.

Each request reads the store afresh, so artifacts made after the server started are there at once.
``completion/complete`` on the template's ``id_or_name`` suggests the artifacts' names, then their ids,
that start with what the client typed.
The SDK's ``MCPServer`` lists only resources registered up front, with a fixed MIME type per template and
no sizes; so these three handlers replace its own at the low-level server, and hand every URI that is not
``artifact://`` to the handler they replaced.
"""

from __future__ import annotations

import base64
from typing import Any
from urllib.parse import unquote

import anyio.to_thread
from mcp import MCPError
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.types import (
    Annotations,
    BlobResourceContents,
    CompleteRequestParams,
    CompleteResult,
    Completion,
    ListResourcesResult,
    ListResourceTemplatesResult,
    PaginatedRequestParams,
    ReadResourceRequestParams,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    ResourceTemplateReference,
    TextResourceContents,
)
from mcp_types.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS

from ..artifacts import Artifact, ArtifactStore
from ..core.errors import ArtifactError, ArtifactNotFoundError

__all__ = [
    "ARTIFACT_SCHEME",
    "ARTIFACT_TEMPLATE",
    "COMPLETION_LIMIT",
    "PAGE_SIZE",
    "add_artifact_resources",
    "artifact_uri",
]

ARTIFACT_SCHEME = "artifact://"
ARTIFACT_TEMPLATE = ARTIFACT_SCHEME + "{id_or_name}"
PAGE_SIZE = 200
"""Artifacts per ``resources/list`` page; ``nextCursor`` leads to the next."""
COMPLETION_LIMIT = 100
"""Values one completion answer carries: the spec's most."""

_TEXT_TYPES = frozenset({"application/json", "application/xml", "application/javascript", "application/yaml"})

Handler = Any  # the low-level server's RequestHandler; its parameter type is erased where it is stored


def artifact_uri(artifact: Artifact) -> str:
    """The URI an artifact is listed under: ``artifact://<id>``."""
    return ARTIFACT_SCHEME + artifact.id


def add_artifact_resources(server: MCPServer[Any], artifacts: ArtifactStore) -> None:
    """Offer ``artifacts`` through resources/list, resources/read and resources/templates/list.

    Also answers completion/complete (and so declares the ``completions`` capability): this server has no
    prompts, and the artifact template is its one thing to complete.
    """
    lowlevel = server._lowlevel_server  # MCPServer has no public way to list resources that come and go
    earlier = {
        method: entry.handler if (entry := lowlevel.get_request_handler(method)) is not None else None
        for method in ("resources/list", "resources/templates/list", "resources/read")
    }

    async def list_resources(
        ctx: ServerRequestContext[Any, Any], params: PaginatedRequestParams
    ) -> ListResourcesResult:
        others: list[Resource] = []
        if params.cursor is None and (handler := earlier["resources/list"]) is not None:
            others = ListResourcesResult.model_validate(_as_dict(await handler(ctx, params))).resources
        try:
            listed = await anyio.to_thread.run_sync(artifacts.list)
        except ArtifactError as exc:  # the store cannot be opened (a read-only workspace, a damaged file)
            raise MCPError(code=INTERNAL_ERROR, message=str(exc)) from exc
        start = _page_start(listed, params.cursor)
        page = listed[start : start + PAGE_SIZE]
        more = start + PAGE_SIZE < len(listed)
        return ListResourcesResult(
            resources=[*others, *(_resource(a) for a in page)], next_cursor=page[-1].id if more else None
        )

    async def list_templates(
        ctx: ServerRequestContext[Any, Any], params: PaginatedRequestParams
    ) -> ListResourceTemplatesResult:
        others: list[ResourceTemplate] = []
        if (handler := earlier["resources/templates/list"]) is not None:
            earlier_result = _as_dict(await handler(ctx, params))
            others = ListResourceTemplatesResult.model_validate(earlier_result).resource_templates
        return ListResourceTemplatesResult(resource_templates=[*others, _TEMPLATE])

    async def read_resource(ctx: ServerRequestContext[Any, Any], params: ReadResourceRequestParams) -> Any:
        if not params.uri.startswith(ARTIFACT_SCHEME):
            handler = earlier["resources/read"]
            if handler is None:
                raise MCPError(code=INVALID_PARAMS, message=f"Unknown resource: {params.uri}")
            return await handler(ctx, params)
        return await anyio.to_thread.run_sync(_read, artifacts, params.uri)

    lowlevel.add_request_handler("resources/list", PaginatedRequestParams, list_resources)
    lowlevel.add_request_handler("resources/templates/list", PaginatedRequestParams, list_templates)
    lowlevel.add_request_handler("resources/read", ReadResourceRequestParams, read_resource)

    async def complete(ctx: ServerRequestContext[Any, Any], params: CompleteRequestParams) -> CompleteResult:
        """The artifact names and ids starting with what was typed; nothing for any other reference."""
        ref, argument = params.ref, params.argument
        if not isinstance(ref, ResourceTemplateReference) or ref.uri != ARTIFACT_TEMPLATE:
            return CompleteResult(completion=Completion(values=[]))
        if argument.name != "id_or_name":
            return CompleteResult(completion=Completion(values=[]))
        try:
            listed = await anyio.to_thread.run_sync(artifacts.list)
        except ArtifactError as exc:
            raise MCPError(code=INTERNAL_ERROR, message=str(exc)) from exc
        return CompleteResult(completion=_completion(listed, unquote(argument.value)))

    lowlevel.add_request_handler("completion/complete", CompleteRequestParams, complete)


_TEMPLATE = ResourceTemplate(
    uri_template=ARTIFACT_TEMPLATE,
    name="artifact",
    title="Artifact by id or name",
    description=(
        "Data a program kept with store_artifact(), or a tool result too large for its record (the record "
        "names its id). id_or_name is the artifact's id (12 hex digits, as in execute_python's result "
        "record) or its name (the newest artifact with that name), percent-encoded."
    ),
)


def _resource(artifact: Artifact) -> Resource:
    return Resource(
        uri=artifact_uri(artifact),
        name=artifact.name or artifact.id,
        description=artifact.description or None,
        mime_type=artifact.type,
        size=artifact.size,
        annotations=Annotations(last_modified=artifact.created),
    )


def _completion(listed: list[Artifact], typed: str) -> Completion:
    """Names (newest first, each once), then ids, that start with ``typed`` (case aside)."""
    prefix = typed.casefold()
    names = dict.fromkeys(a.name for a in listed if a.name and a.name.casefold().startswith(prefix))
    ids = [a.id for a in listed if a.id.startswith(prefix)]
    values = [*names, *ids]
    return Completion(
        values=values[:COMPLETION_LIMIT], total=len(values), has_more=len(values) > COMPLETION_LIMIT
    )


def _page_start(listed: list[Artifact], cursor: str | None) -> int:
    """Where the page after ``cursor`` (the id of the previous page's last artifact) starts."""
    if cursor is None:
        return 0
    for index, artifact in enumerate(listed):
        if artifact.id == cursor:
            return index + 1
    raise MCPError(
        code=INVALID_PARAMS,
        message=f"invalid cursor {cursor!r}: its artifact is gone; list the resources again from the start",
    )


def _read(artifacts: ArtifactStore, uri: str) -> ReadResourceResult:
    """The artifact ``uri`` names, as text (text types that are UTF-8) or base64 (the rest)."""
    key = unquote(uri[len(ARTIFACT_SCHEME) :])
    if not key:
        raise MCPError(
            code=INVALID_PARAMS,
            message=f"{uri!r} names no artifact: write artifact://<id> or artifact://<name>",
            data={"uri": uri},
        )
    try:
        artifact = artifacts.get(key)
        data = artifacts.read_bytes(artifact.id)
    except ArtifactNotFoundError as exc:
        raise MCPError(code=INVALID_PARAMS, message=str(exc), data={"uri": uri}) from exc
    except ArtifactError as exc:
        raise MCPError(code=INTERNAL_ERROR, message=str(exc), data={"uri": uri}) from exc
    meta = {"codemode/artifact": artifact.to_dict()}
    text = _as_text(data, artifact.type)
    if text is not None:
        return ReadResourceResult(
            contents=[TextResourceContents(uri=uri, mime_type=artifact.type, text=text, _meta=meta)]
        )
    blob = base64.b64encode(data).decode("ascii")
    return ReadResourceResult(
        contents=[BlobResourceContents(uri=uri, mime_type=artifact.type, blob=blob, _meta=meta)]
    )


def _as_text(data: bytes, mime_type: str) -> str | None:
    """The data as text when its type is textual and it is valid UTF-8; None means send it as a blob."""
    base = mime_type.split(";", 1)[0].strip()
    textual = (
        base.startswith("text/") or base in _TEXT_TYPES or base.endswith("+json") or base.endswith("+xml")
    )
    if not textual:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _as_dict(result: Any) -> Any:
    """A handler's result as wire data (handlers may return a model or a dict)."""
    dump = getattr(result, "model_dump", None)
    return dump(by_alias=True, mode="json", exclude_none=True) if callable(dump) else result
