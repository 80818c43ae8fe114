"""The ``tools`` module a worker's program sees: typed functions whose calls go to the kernel.

Built once per tool set in the pre-started process (from the same type model as the stubs), then
inherited by every forked worker, so a thousand tools do not cost a compile per execution. Besides one
function per tool it holds ``atools`` (async twins), ``parallel``, ``search_tools``, ``tool_schema`` and
the artifact functions (``store_artifact``, ``get_artifact``, ``list_artifacts``), which ask the kernel:
the worker cannot open the store.
"""

from __future__ import annotations

import contextlib
import json
import sys
import threading
import types
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ..core.errors import ArtifactError, CodeModeError, LLMError, ToolArgumentError, UnknownToolError
from ..core.progress import ProgressHandler, ToolProgress, ToolStream
from ..core.records import NOTE_DATA_BYTES, NOTE_MESSAGE_CHARS
from ..core.results import error_message
from ..core.toolspec import ToolSpec
from ..typegen import (
    ToolModel,
    build_tool_model,
    make_async_tool_function,
    make_docstring,
    make_tool_function,
    render_signature,
)
from ..typegen.text import summary
from .channel import Channel
from .protocol import FrameTooLarge, NotifyFrame, ProtocolError
from .values import decode_value, encode_artifact

__all__ = ["HELPER_NAMES", "LLM_SERVER", "LLM_TOOL", "ProgramComplete", "ToolRuntime", "build_tools_module"]

HELPER_NAMES = (
    "complete",
    "notify",
    "parallel",
    "stream",
    "search_tools",
    "tool_schema",
    "atools",
    "store_artifact",
    "get_artifact",
    "list_artifacts",
    "llm",
    "llm_json",
)
_MAX_PARALLEL_THREADS = 50
_THREAD_STACK_BYTES = 2 * 1024 * 1024
"""Stacks of parallel()'s threads: the default (8 MiB each) would spend a worker's address-space cap."""


class ToolRuntime:
    """Where the tool functions send their calls; the channel is attached in each forked worker.

    It also holds the tools module and its models, so a run can bring its own tools (``set_run_tools``).
    """

    def __init__(self) -> None:
        self.channel: Channel | None = None
        self.module = types.ModuleType(
            "tools", "Every configured MCP tool as a typed function (calls run in the kernel)."
        )
        self.models: list[ToolModel] = []
        """Every tool's model: the pre-started ones, then the current run's (``search_tools`` reads it)."""
        self._base = 0
        self._run_functions: dict[str, Callable[..., Any]] = {}
        self.shapes: dict[str, dict[str, Any]] = {}
        """The current run's inferred result shapes by function name (``RunFrame.shapes``), newer than
        those the functions were built with."""

    def require_channel(self) -> Channel:
        """The channel of the running execution."""
        if self.channel is None:
            raise CodeModeError("tool functions can only be called while an execution runs")
        return self.channel

    def set_run_tools(self, descriptors: Iterable[dict[str, Any]]) -> dict[str, Callable[..., Any]]:
        """Make a run's own tools (a notebook's functions, a caller's tools) functions of the module.

        They replace the previous run's (a session's worker serves several); returns the new functions by
        name, for the program's globals.
        """
        module, atools = self.module, self.module.atools
        for name in self._run_functions:
            module.__dict__.pop(name, None)
            atools.__dict__.pop(name, None)
        del self.models[self._base :]
        self._run_functions = {}
        for model in map(_model, descriptors):
            self.models.append(model)
            function = self._run_functions[model.function_name] = _sync_function(model, self)
            setattr(module, model.function_name, function)
            setattr(atools, model.function_name, _async_function(model, self))
        module.__all__ = [*(m.function_name for m in self.models), *HELPER_NAMES]  # type: ignore[attr-defined]
        return dict(self._run_functions)

    @property
    def run_tool_names(self) -> list[str]:
        """The names of the current run's own tools."""
        return list(self._run_functions)


def build_tools_module(descriptors: Iterable[dict[str, Any]], runtime: ToolRuntime) -> types.ModuleType:
    """Make the ``tools`` module from tool descriptors (ToolSpec fields plus ``function_name``)."""
    models = runtime.models
    models.extend(map(_model, descriptors))
    runtime._base = len(models)
    module = runtime.module
    atools = types.SimpleNamespace()
    for model in models:
        setattr(module, model.function_name, _sync_function(model, runtime))
        setattr(atools, model.function_name, _async_function(model, runtime))
    module.atools = atools  # type: ignore[attr-defined]
    module.parallel = _parallel(runtime)  # type: ignore[attr-defined]
    module.stream = _stream(runtime)  # type: ignore[attr-defined]
    module.ToolProgress = ToolProgress  # type: ignore[attr-defined]
    module.search_tools = _search_tools(models)  # type: ignore[attr-defined]
    module.tool_schema = _tool_schema(models, runtime)  # type: ignore[attr-defined]
    module.complete = complete  # type: ignore[attr-defined]
    module.notify = _notify_function(runtime)  # type: ignore[attr-defined]
    for function in (*_artifact_functions(runtime), *_llm_functions(runtime)):
        setattr(module, function.__name__, function)
    module.__all__ = [*(m.function_name for m in models), *HELPER_NAMES]  # type: ignore[attr-defined]
    sys.modules["tools"] = module
    return module


class ProgramComplete(BaseException):
    """Raised by ``complete()``: the program ends with a final answer.

    Not an Exception, so ``except Exception`` in the program does not stop it; ``finally`` blocks run.
    """

    def __init__(self, answer: str, data: dict[str, Any]) -> None:
        super().__init__(answer)
        self.answer = answer
        self.data = data


def complete(answer: str, /, **data: Any) -> None:
    """End the program with a final answer for the user, and data beside it (seed 004's ``complete()``).

    ``complete("Lima is the warmest at 24 C", city="Lima", temperature=24.0)``: the agent returns the answer
    as its own and stops; a ``%%codemode`` cell shows it. Nothing after the call runs.
    """
    if not isinstance(answer, str):
        raise TypeError(
            f"complete(): the answer is the text for the user (a str), not a {type(answer).__name__}"
        )
    raise ProgramComplete(answer, data)


complete.__module__ = "tools"


def _notify_function(runtime: ToolRuntime) -> Callable[..., None]:
    """``notify``: a note for whoever watches the run, sent at once (the program does not wait)."""

    def notify(message: str, /, **data: Any) -> None:
        """Send a note at once to whoever watches this run: the trace, a ``codemode serve`` client, a model.

        ``notify("halfway", done=50, total=100)``. A model waiting on a long run is woken by it; the notes
        are kept in the run's record. ``data`` holds JSON values (str, numbers, bools, None, lists, dicts).
        """
        if not isinstance(message, str):
            raise TypeError(f"notify(): the message is text (a str), not a {type(message).__name__}")
        if len(message) > NOTE_MESSAGE_CHARS:
            raise ValueError(
                f"notify(): the message has {len(message)} characters, at most {NOTE_MESSAGE_CHARS}; "
                "print() long text, or store_artifact() it and notify with its id"
            )
        try:
            size = len(json.dumps(data, allow_nan=False))
        except (TypeError, ValueError) as exc:
            raise TypeError(
                f"notify(): data must be JSON values (str, numbers, lists, dicts): {exc}"
            ) from None
        if size > NOTE_DATA_BYTES:
            raise ValueError(
                f"notify(): the data takes {size} bytes as JSON, at most {NOTE_DATA_BYTES}; "
                "store_artifact() large data and notify with its id"
            )
        for stream in (sys.stdout, sys.stderr):  # what was printed before the note arrives before it
            with contextlib.suppress(Exception):
                stream.flush()
        with contextlib.suppress(OSError):  # the kernel is gone: the note has nowhere to go
            runtime.require_channel().send(NotifyFrame(type="notify", message=message, data=data))

    notify.__module__ = "tools"
    return notify


def _model(descriptor: dict[str, Any]) -> ToolModel:
    return build_tool_model(
        ToolSpec(
            server=descriptor["server"],
            name=descriptor["name"],
            description=descriptor.get("description") or "",
            input_schema=descriptor.get("input_schema") or {"type": "object"},
            output_schema=descriptor.get("output_schema"),
            title=descriptor.get("title"),
            inferred_output=descriptor.get("inferred_output"),
            inferred_calls=descriptor.get("inferred_calls") or 0,
        ),
        descriptor["function_name"],
        check=None,  # the kernel found which parameters accept null, and checks every call
        nullable=descriptor.get("nullable") or (),
    )


def _sync_function(model: ToolModel, runtime: ToolRuntime) -> Callable[..., Any]:
    server, tool = model.spec.server, model.spec.name

    def send(arguments: dict[str, Any], on_progress: ProgressHandler | None) -> dict[str, Any]:
        try:
            return runtime.require_channel().call(server, tool, arguments, on_progress)
        except FrameTooLarge as exc:
            raise _too_large(model.function_name, exc) from None

    return make_tool_function(model, send, module="tools")


def _async_function(model: ToolModel, runtime: ToolRuntime) -> Callable[..., Any]:
    server, tool = model.spec.server, model.spec.name

    async def send(arguments: dict[str, Any], on_progress: ProgressHandler | None) -> dict[str, Any]:
        try:
            return await runtime.require_channel().acall(server, tool, arguments, on_progress)
        except FrameTooLarge as exc:
            raise _too_large(model.function_name, exc) from None

    return make_async_tool_function(model, send, module="tools")


def _too_large(function: str, exc: FrameTooLarge) -> ValueError:
    """The error a program gets for arguments no frame can carry: nothing was sent, so it may retry."""
    return ValueError(
        f"{function}(): the arguments are {exc.size:,} bytes as JSON, more than one call can carry "
        f"({exc.limit // 2**20} MiB); nothing was sent: pass less data per call"
    )


def _parallel(runtime: ToolRuntime) -> Callable[..., list[Any]]:
    def parallel(calls: Sequence[Callable[[], Any]], *, max_workers: int | None = None) -> list[Any]:
        """Run calls concurrently and return their results in order; a failed slot holds its exception.

        Each call is a function of no arguments, typically ``lambda c=c: get_weather(city=c, unit="celsius")``
        A call that raises does not stop the others: its slot in the result is the exception object, so
        ``[r for r in results if not isinstance(r, Exception)]`` keeps the successes. Up to 50 calls run at
        once; ``asyncio.gather`` over ``atools`` has no such limit. The record lists the batch's tool
        calls in the order of ``calls``.
        """
        if not calls:
            return []
        for index, call in enumerate(calls):
            if not callable(call):
                raise TypeError(
                    f"parallel(): item {index} is a {type(call).__name__}, not a function; "
                    "write parallel([lambda c=c: get_weather(city=c, unit='celsius') for c in cities])"
                )
        order = runtime.require_channel().order
        first = order.reserve(len(calls))

        def run(index: int) -> Any:
            order.hand(first + index)  # the slot's (first) tool call keeps its place in the batch
            try:
                return calls[index]()
            except Exception as exc:
                return exc
            finally:
                order.hand(None)

        from concurrent.futures import ThreadPoolExecutor  # with logging: loaded by the programs that use it

        workers = min(len(calls), max_workers or _MAX_PARALLEL_THREADS)
        previous = threading.stack_size(_THREAD_STACK_BYTES)
        try:
            with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="parallel") as pool:
                return list(pool.map(run, range(len(calls))))
        finally:
            threading.stack_size(previous)

    return parallel


def _stream(runtime: ToolRuntime) -> Callable[..., ToolStream]:
    def stream(function: Callable[..., Any], /, *args: Any, **kwargs: Any) -> ToolStream:
        """Call a tool and iterate over its progress as the server reports it; ``.result`` afterwards.

        ``call = stream(get_forecast, city="Oslo", days=5)``, then ``for p in call: print(p.message)``
        (each ``p`` a ToolProgress: ``progress``, ``total``, ``message``, ``fraction``), then
        ``call.result``. The call takes its place in the record where the loop starts. A failed
        call raises from the loop. With an ``atools`` function: ``async for p in stream(atools.f, ...)``.
        """
        order = runtime.require_channel().order

        def numbered(call: Callable[[], Any]) -> Callable[[], Any]:
            # On the program's thread as the iteration starts: the call is numbered in program order,
            # not when its thread gets to run.
            number = order.reserve(1)

            def run() -> Any:
                order.hand(number)
                try:
                    return call()
                finally:
                    order.hand(None)

            return run

        return ToolStream(function, args, kwargs, wrap=numbered)

    return stream


_SEARCH_LIMIT = 10
"""``search_tools``' default: ``typegen.search.DEFAULT_LIMIT``, stated here so that the ranking is loaded
by the programs that search, not by every worker (test_worker_footprint.py checks that the two agree)."""


def _search_tools(models: list[ToolModel]) -> Callable[..., list[dict[str, str]]]:
    def search_tools(query: str, limit: int = _SEARCH_LIMIT) -> list[dict[str, str]]:
        """The tools that fit the words of ``query``, best first: at most ``limit`` (10; 50 at most).

        A word in a tool's name counts most, then in its argument names, then in its description
        (``snake_case`` and ``camelCase`` split; typegen/search.py). Each hit is ``{"name", "signature",
        "description"}``; call ``tool_schema(name)`` for the rest.
        """
        from ..typegen.search import rank_tools  # loaded by the programs that search, not by every worker

        return [
            {
                "name": hit.model.function_name,
                "signature": render_signature(hit.model),
                "description": summary(hit.model.spec.description, 200),
            }
            for hit in rank_tools(models, query, limit)
        ]

    return search_tools


def _tool_schema(models: list[ToolModel], runtime: ToolRuntime) -> Callable[[str], dict[str, Any]]:
    def tool_schema(name: str) -> dict[str, Any]:
        """Everything about one tool: signature, docstring and its raw JSON Schemas.

        ``inferred_output`` is set for a tool without an outputSchema whose results were seen:
        ``{"calls": N, "schema": ...}``, the shape inferred from them (not the server's word).
        """
        model = next((m for m in models if m.function_name == name), None) or next(
            (m for m in models if m.spec.name == name), None
        )
        if model is None:
            raise UnknownToolError(f"no tool named {name!r}; search_tools(query) lists tools by keyword")
        return {
            "name": model.function_name,
            "tool": model.spec.name,
            "server": model.spec.server,
            "signature": render_signature(model),
            "doc": make_docstring(model),
            "input_schema": model.spec.input_schema,
            "output_schema": model.spec.output_schema,
            "inferred_output": runtime.shapes.get(model.function_name)
            or (
                {"calls": model.inferred_calls, "schema": model.spec.inferred_output}
                if model.inferred_calls
                else None
            ),
        }

    return tool_schema


def _artifact_functions(
    runtime: ToolRuntime,
) -> tuple[Callable[..., str], Callable[[str], Any], Callable[[], Any]]:
    """``store_artifact``, ``get_artifact`` and ``list_artifacts``: requests to the kernel's store."""

    def store_artifact(
        data: Any, name: str | None = None, description: str | None = None, type: str | None = None
    ) -> str:
        """Keep ``data`` in the workspace's artifact store, beyond this execution; returns its id.

        str is stored as text, bytes as they are (PNG and other images recognised), JSON values as JSON,
        a pandas DataFrame as CSV. ``name`` finds it later (``get_artifact(name)`` gives the newest of
        that name); ``type`` labels str or bytes with a MIME type (``type="text/html"``).
        """
        envelope = encode_artifact(data)
        try:  # name, description and type go as the program passed them: the kernel's store checks them
            stored = runtime.require_channel().store_artifact(envelope, name, description, type)
        except ProtocolError as exc:  # the frame is over the size limit
            raise ArtifactError(f"cannot send this artifact to the store: {exc}") from None
        return str(stored["id"])

    def get_artifact(id_or_name: str) -> Any:
        """The value of an artifact, by id or name (the newest with that name).

        Raises ``ArtifactNotFoundError`` (listing the artifacts that exist) when there is none.
        """
        return decode_value(runtime.require_channel().get_artifact(id_or_name))

    def list_artifacts() -> list[dict[str, Any]]:
        """Every artifact's metadata as dicts, newest first.

        Keys: id, name, type, description, size, created, sha256, execution_id.
        """
        return [dict(artifact) for artifact in runtime.require_channel().list_artifacts()]

    for function in (store_artifact, get_artifact, list_artifacts):
        function.__module__ = "tools"
    return store_artifact, get_artifact, list_artifacts


LLM_SERVER, LLM_TOOL = "codemode", "llm"
"""How a program's ``llm()`` travels: as a call of this pseudo tool, so the kernel records it in the trace
and a replay answers it from the record like any tool call. (A configured server with this name would
never see these calls: the kernel answers them.)"""

_JSON_ONLY = "Answer with one JSON value and nothing else: no prose, no Markdown fences."


def _llm_functions(runtime: ToolRuntime) -> tuple[Callable[..., str], Callable[..., Any]]:
    """``llm`` and ``llm_json``: questions to the configured model, asked by the kernel (no key here)."""

    def llm(prompt: str, *, system: str | None = None, max_tokens: int | None = None) -> str:
        """Ask the configured model; returns its answer as text.

        The kernel sends the request (the program never holds a key) and records it in the trace.
        Raises ``LLMError`` when no model is configured or the request fails.
        """
        arguments: dict[str, Any] = {"prompt": str(prompt)}
        if system is not None:
            arguments["system"] = str(system)
        if max_tokens is not None:
            arguments["max_tokens"] = int(max_tokens)
        try:
            result = runtime.require_channel().call(LLM_SERVER, LLM_TOOL, arguments)
        except FrameTooLarge as exc:
            raise _too_large("llm", exc) from None
        if result.get("isError"):
            raise LLMError(error_message(result))
        return "".join(str(c.get("text", "")) for c in result.get("content") or () if c.get("type") == "text")

    def llm_json(
        prompt: str, schema: dict[str, Any] | None = None, *, system: str | None = None, strict: bool = True
    ) -> Any:
        """Ask the configured model for JSON; returns the parsed value, checked against ``schema``.

        Raises ``ValueError`` naming what was wrong when the answer is not JSON or does not fit. With
        ``strict=False`` it never does (seed 004): an answer that is not JSON comes back as its text, and
        one that does not fit ``schema`` as it is parsed. A ``schema`` that is not JSON Schema raises
        ``ToolArgumentError`` before the model is asked.
        """
        wanted = _JSON_ONLY
        if schema is not None:
            wanted += f" The value must validate against this JSON Schema: {json.dumps(schema)}"
        check = _schema_check(schema) if schema is not None and strict else None
        answer = llm(f"{prompt}\n\n{wanted}", system=system)
        text = _strip_fences(answer)
        try:
            value = json.loads(text)
        except ValueError as exc:
            if not strict:
                return answer
            raise ValueError(f"llm_json: the model's answer is not JSON ({exc}): {answer[:200]!r}") from None
        if check is not None:
            check(value)
        return value

    for function in (llm, llm_json):
        function.__module__ = "tools"
    return llm, llm_json


def _schema_check(schema: Any) -> Callable[[Any], None]:
    """``llm_json``'s check of an answer against the program's ``schema``, compiled before the model is asked.

    A schema the program wrote is untrusted input, so it is checked here, where the program runs: in the
    sandbox, under the run's CPU and time limits, with no network and the host's secrets hidden. A ``$ref``
    jsonschema fetches (a file, an address) reaches only what the program could reach itself, and a slow
    ``pattern`` costs the run its own time, never the kernel's event loop. jsonschema is imported here, at
    the call: the one third-party import of the worker's side, which pyproject.toml's import contract
    allows by name (docs/architecture.md, the process boundary); a worker whose program never passes a
    schema never loads it.

    Raises:
        ToolArgumentError: ``schema`` is not valid JSON Schema.
    """
    import jsonschema

    try:
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
        validator = cls(schema)
    except Exception as exc:  # the schema is the program's: SchemaError, or odd values jsonschema trips on
        reason = getattr(exc, "message", None) or str(exc) or type(exc).__name__
        raise ToolArgumentError(
            f"llm_json(): schema is not a valid JSON Schema ({reason}); pass a JSON Schema dict, such as "
            '{"type": "object", "properties": {"city": {"type": "string"}}}',
            tool="llm_json",
            field="schema",
        ) from None

    def check(value: Any) -> None:
        """Raise ``ValueError`` saying what jsonschema found wrong with ``value``."""
        try:
            error = jsonschema.exceptions.best_match(validator.iter_errors(value))
        except Exception as exc:  # a $ref it cannot resolve (a hidden file, an address), absurd nesting...
            reason = str(exc) or type(exc).__name__
            raise ValueError(
                f"llm_json: jsonschema could not check the answer against the schema ({reason})"
            ) from None
        if error is not None:
            raise ValueError(f"llm_json: the answer does not fit the schema: {error.message}")

    return check


def _strip_fences(text: str) -> str:
    """The JSON inside a Markdown code fence, which models add even when asked not to."""
    stripped = text.strip()
    if stripped.startswith("```"):
        stripped = stripped.split("\n", 1)[1] if "\n" in stripped else ""
        stripped = stripped.rsplit("```", 1)[0]
    return stripped.strip()
