"""Code as LLMs write it, made runnable; errors made into records a model can fix its code from.

Models wrap programs in Markdown fences, start them with a ``%%codemode`` cell-magic line, use
``await`` at top level and end with a bare expression whose value they want back. ``prepare`` accepts
all of that and compiles the program so that every line number, in every error, still counts in the
text *as written*: the lines it drops are replaced by blank lines rather than removed.

``error_record`` turns any exception into the JSON record of the execution result contract
(``{type, message, line, column, source_line, traceback}``), with the traceback trimmed to the
program's own frames, so that the record alone is enough to fix the code.
"""

from __future__ import annotations

import ast
import inspect
import itertools
import re
from collections.abc import Container, Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property
from types import CodeType, TracebackType
from typing import Any, NamedTuple, cast

from ..core.errors import CodeSyntaxError
from ..core.records import ErrorRecord
from .lenient import RETURN_NAME, ProgramReturn, read_json_literals, rewrite_returns

__all__ = [
    "CodeSyntaxError",
    "PreparedCode",
    "arun_prepared",
    "error_record",
    "format_error_text",
    "prepare",
    "remember_run",
    "run_prepared",
]

OUT_NAME = "__out"
# The last expression's value is assigned to this global; a name no program would choose.
VALUE_NAME = "__codemode_last_value__"

_LINE_BREAK = re.compile(r"\r\n|\r|\n")  # the line breaks Python's tokenizer counts
_MAGIC = re.compile(r"%%codemode\b")
_FENCE_OPEN = re.compile(r"(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^\s`]*)[^`]*")
_PYTHON_INFO = {"", "python", "py", "python3", "py3", "ipython", "ipython3", "codemode"}
_MESSAGE_LIMIT = 2000  # a hostile program can raise with a message of any size
_SHOWN_REPEATS = 3  # identical consecutive frames shown before "[Previous line repeated ...]"
_FRAMES_HEAD, _FRAMES_TAIL = 8, 20  # the frames kept from a very long traceback
_CHAIN_DEPTH = 3
_SUB_EXCEPTIONS = 5
_DEFAULT_MESSAGES: dict[type[BaseException], str] = {
    KeyboardInterrupt: "the execution was interrupted (a timeout or an interrupt)",
    MemoryError: "out of memory",
    RecursionError: "maximum recursion depth exceeded",
}


@dataclass(frozen=True)
class PreparedCode:
    """A program ready to run, and what is needed to point at its lines as the author wrote them.

    ``text`` is the code as written; ``source`` the part that runs (inside the fence, without the
    magic line, de-indented by ``column_offset`` spaces), which starts after ``line_offset`` lines of
    ``text``. ``is_async`` says whether running ``code`` gives a coroutine (top-level ``await``),
    ``last_expression`` whether the program ends with an expression whose value it returns, ``returns``
    whether it has a top-level ``return``, and ``notes`` what was read beyond Python (``lenient``).
    """

    text: str
    source: str
    code: CodeType
    is_async: bool
    filename: str
    line_offset: int
    column_offset: int = 0
    last_expression: bool = False
    returns: bool = False
    notes: tuple[str, ...] = ()

    @cached_property
    def lines(self) -> tuple[str, ...]:
        """The lines of the code as written, split where Python counts a line break."""
        return tuple(_LINE_BREAK.split(self.text))

    def line(self, number: int | None) -> str | None:
        """Line ``number`` (1-based) of the code as written, or None when there is no such line."""
        if number is None or not 1 <= number <= len(self.lines):
            return None
        return self.lines[number - 1]


class _Region(NamedTuple):
    """The lines ``[start, end)`` of the text that hold the program, and the fence's indentation."""

    start: int
    end: int
    indent: int = 0


def prepare(code: str, *, filename: str = "<code>", defined: Container[str] = ()) -> PreparedCode:
    """Compile a program as an LLM or a person wrote it, keeping the written line numbers.

    Tolerates a leading ``%%codemode`` line and a Markdown fence (text around the fence is ignored;
    the first Python block wins), allows top-level ``await``/``async for``/``async with``, makes a
    final bare expression the program's value, ends it at a top-level ``return``, and reads the JSON
    literals ``true``/``false``/``null`` where nothing defines them (``lenient``; ``defined`` holds the
    names the run's namespace has).

    Raises:
        CodeSyntaxError: the program does not compile; its ``error`` record points at the written line.
    """
    lines = _LINE_BREAK.split(code)
    region = _skip_magic(lines, _Region(0, len(lines)))
    try:
        tree = _parse(lines, region, filename)
    except SyntaxError as exc:
        # A fence line is never valid Python, so only a program that does not parse is searched
        # for one; a fence-like line inside a string of valid code is left alone.
        fenced = _find_fence(lines, region)
        if fenced is None:
            raise _syntax_error(exc, code, region, filename) from None
        region = _skip_magic(lines, fenced)
        try:
            tree = _parse(lines, region, filename)
        except SyntaxError as inner:
            raise _syntax_error(inner, code, region, filename) from None
    returns = rewrite_returns(tree)
    notes = read_json_literals(tree, defined)
    last_expression = _capture_last_expression(tree)
    try:
        compiled = compile(tree, filename, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
    except SyntaxError as exc:  # 'return' outside function and other errors found by the compiler
        raise _syntax_error(exc, code, region, filename) from None
    return PreparedCode(
        text=code,
        source=_body(lines, region),
        code=compiled,
        is_async=bool(compiled.co_flags & inspect.CO_COROUTINE),
        filename=filename,
        line_offset=region.start,
        column_offset=region.indent,
        last_expression=last_expression,
        returns=returns,
        notes=tuple(notes),
    )


def _skip_magic(lines: list[str], region: _Region) -> _Region:
    """Step over a ``%%codemode ...`` line when it is the first non-blank line of the region."""
    for index in range(region.start, region.end):
        if lines[index].strip():
            if _MAGIC.match(lines[index].lstrip()):
                return region._replace(start=index + 1)
            break
    return region


def _find_fence(lines: list[str], region: _Region) -> _Region | None:
    """The lines inside the first Python fenced block (else the first block of any language).

    A block that is never closed runs to the end of the text: a model's answer may be cut off.
    """
    first: _Region | None = None
    index = region.start
    while index < region.end:
        opening = _FENCE_OPEN.fullmatch(lines[index])
        if opening is None:
            index += 1
            continue
        fence = opening["fence"]
        closing = re.compile(rf" {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*")
        end = next((i for i in range(index + 1, region.end) if closing.fullmatch(lines[i])), region.end)
        block = _Region(index + 1, end, len(opening["indent"]))
        if opening["info"].lower() in _PYTHON_INFO:
            return block
        first = first or block
        index = end + 1
    return first


def _body(lines: list[str], region: _Region) -> str:
    """The program text of a region, with the fence's indentation removed as Markdown does."""
    prefix = " " * region.indent
    body = lines[region.start : region.end]
    return "\n".join(line.removeprefix(prefix) for line in body)


def _parse(lines: list[str], region: _Region, filename: str) -> ast.Module:
    """Parse the region; blank lines in front keep every line number as written."""
    return ast.parse("\n" * region.start + _body(lines, region), filename, "exec")


def _capture_last_expression(tree: ast.Module) -> bool:
    """Rewrite a final bare expression into an assignment to the hidden value name."""
    if not tree.body or not isinstance(tree.body[-1], ast.Expr):
        return False
    last = tree.body[-1]
    target = ast.copy_location(ast.Name(id=VALUE_NAME, ctx=ast.Store()), last)
    tree.body[-1] = ast.copy_location(ast.Assign(targets=[target], value=last.value), last)
    ast.fix_missing_locations(tree)
    return True


def _syntax_error(exc: SyntaxError, text: str, region: _Region, filename: str) -> CodeSyntaxError:
    """Wrap a compile error in a CodeSyntaxError whose record shows the written line and caret."""
    written = PreparedCode(text, "", _EMPTY_CODE, False, filename, region.start, region.indent)
    return CodeSyntaxError(dict(_syntax_record(exc, written)), filename=filename)


_EMPTY_CODE = compile("", "<empty>", "exec", dont_inherit=True)


def run_prepared(prepared: PreparedCode, globals: dict[str, Any]) -> Any:
    """Run the program in ``globals`` and return its value (the last expression, else ``__out``).

    A program with top-level ``await`` runs in a fresh event loop. ``__out`` belongs to one
    execution: a value left from an earlier run in the same globals is removed first.

    Raises:
        RuntimeError: the program needs awaiting but an event loop is already running in this thread
            (use ``arun_prepared`` there).
    """
    if prepared.is_async:
        import asyncio  # only a program that awaits pays for loading it (a worker does not preload it)

        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            raise RuntimeError("this program uses top-level await: inside an event loop, use arun_prepared")
    _clear_outputs(globals)
    if prepared.returns:
        globals[RETURN_NAME] = ProgramReturn
    try:
        if prepared.is_async:
            asyncio.run(eval(prepared.code, globals))
        else:
            exec(prepared.code, globals)
    except ProgramReturn as returned:
        return returned.value
    return _program_value(prepared, globals)


async def arun_prepared(prepared: PreparedCode, globals: dict[str, Any]) -> Any:
    """Run the program in ``globals`` on the running event loop and return its value.

    The same as ``run_prepared``, for callers that already run an event loop.
    """
    _clear_outputs(globals)
    if prepared.returns:
        globals[RETURN_NAME] = ProgramReturn
    try:
        if prepared.is_async:
            await eval(prepared.code, globals)
        else:
            exec(prepared.code, globals)
    except ProgramReturn as returned:
        return returned.value
    return _program_value(prepared, globals)


def _clear_outputs(globals: dict[str, Any]) -> None:
    """Forget the outputs of an earlier execution so that they are never taken for this one's."""
    globals.pop(OUT_NAME, None)
    globals.pop(VALUE_NAME, None)


def _program_value(prepared: PreparedCode, globals: dict[str, Any]) -> Any:
    """The last expression's value; when that is None (``print(...)``, say), ``__out`` if set."""
    value = globals.pop(VALUE_NAME, None) if prepared.last_expression else None
    return globals.get(OUT_NAME) if value is None else value


# --- error records ---------------------------------------------------------------------------------


def error_record(exc: BaseException, prepared: PreparedCode | None) -> ErrorRecord:
    """Describe an exception as ``{type, message, line, column, source_line, traceback}``.

    Lines and columns (1-based) count in the code as written; the traceback keeps only the program's
    own frames. Never raises, whatever the exception's ``__str__`` does.
    """
    try:
        if isinstance(exc, CodeSyntaxError):
            return cast(ErrorRecord, dict(exc.error))
        if isinstance(exc, SyntaxError) and (prepared is None or exc.filename == prepared.filename):
            return _syntax_record(exc, prepared)
        return _runtime_record(exc, prepared)
    except Exception as failure:  # a record must come out even when describing the error fails
        name = _type_name(exc)
        message = f"(the error could not be described: {_type_name(failure)})"
        return {"type": name, "message": message, "line": None, "column": None, "source_line": None,
                "traceback": f"{name}: {message}"}  # fmt: skip


def format_error_text(record: ErrorRecord | Mapping[str, object]) -> str:
    """Render an error record as the short text a person or a model reads to fix the code.

    The record may come from an untrusted worker, so every field is treated as untrusted text.
    """
    traceback = record.get("traceback")
    if isinstance(traceback, str) and traceback:
        return _clip(traceback, 20 * _MESSAGE_LIMIT)
    text = f"{_clip(str(record.get('type')), 200)}: {_clip(str(record.get('message')), _MESSAGE_LIMIT)}"
    if isinstance(record.get("line"), int):
        text += f"\n  at line {record['line']}: {_clip(str(record.get('source_line') or ''), 500)}"
    return text


def _syntax_record(exc: SyntaxError, prepared: PreparedCode | None) -> ErrorRecord:
    """The record of a compile error: the written line, its text and a caret under the fault."""
    line = exc.lineno
    column = exc.offset if exc.offset and exc.offset > 0 else None
    end_column = exc.end_offset if exc.end_lineno == line and exc.end_offset else None
    if prepared is not None and line is not None and line > prepared.line_offset:
        source_line = prepared.line(line)
        shift = prepared.column_offset
        column, end_column = (c + shift if c else c for c in (column, end_column))
    else:
        source_line = exc.text.rstrip("\r\n") if exc.text else None
    name = _type_name(exc)
    msg = _clip(str(exc.msg), _MESSAGE_LIMIT)
    pointer = _caret_block(source_line, column, end_column)
    filename = prepared.filename if prepared else exc.filename
    traceback = f'  File "{filename}", line {line}\n{pointer}{name}: {msg}'
    return {"type": name, "message": f"{msg}\n{pointer}".rstrip("\n"), "line": line, "column": column,
            "source_line": source_line, "traceback": traceback}  # fmt: skip


def _caret_block(source_line: str | None, column: int | None, end_column: int | None) -> str:
    """The source line without its indentation and carets under columns [column, end_column)."""
    if source_line is None or not source_line.strip():
        return ""
    stripped = source_line.lstrip()
    text = f"    {stripped.rstrip()}\n"
    if column is None:
        return text
    start = max(column - 1 - (len(source_line) - len(stripped)), 0)
    width = max((end_column or 0) - column, 1)
    width = max(min(width, len(stripped.rstrip()) - start), 1)
    return text + "    " + " " * start + "^" * width + "\n"


class _Frame(NamedTuple):
    """One traceback entry: whether it is the program's own, and where it stands."""

    own: bool
    name: str
    line: int | None
    column: int | None  # 1-based, in characters of the written line
    end_column: int | None
    source: PreparedCode | None = None  # the program it belongs to: this run's, or an earlier one's


def _runtime_record(exc: BaseException, prepared: PreparedCode | None) -> ErrorRecord:
    """The record of an exception raised while the program ran, located at its innermost own frame."""
    frames = _frames(exc.__traceback__, prepared)
    own = [frame for frame in frames if frame.own]
    innermost = own[-1] if own else None
    line = innermost.line if innermost else None
    where = innermost.source if innermost and innermost.source else prepared
    name, message = _type_name(exc), _message(exc)
    lines = _render_frames(frames, prepared) if prepared is not None else _render_foreign(frames)
    lines.append(f"{name}: {message}")
    lines.extend(_chain(exc, prepared))
    return {
        "type": name,
        "message": message,
        "line": line,
        "column": innermost.column if innermost else None,
        "source_line": where.line(line) if where and innermost else None,
        "traceback": "\n".join(lines),
    }


def _frames(tb: TracebackType | None, prepared: PreparedCode | None) -> list[_Frame]:
    """Every traceback entry, outermost first, marked as the program's own or not."""
    frames = []
    for entry in _walk(tb):
        code = entry.tb_frame.f_code
        source = prepared if prepared is not None and code.co_filename == prepared.filename else None
        if source is None and prepared is not None:
            source = _EARLIER_RUNS.get(code.co_filename)  # a function a session's earlier run defined
        column = end_column = None
        if source is not None:
            column, end_column = _columns(entry, source)
        frames.append(_Frame(source is not None, code.co_name, entry.tb_lineno, column, end_column, source))
    return frames


def _walk(tb: TracebackType | None) -> Iterator[TracebackType]:
    """The traceback entries from the outermost frame to the one that raised."""
    while tb is not None:
        yield tb
        tb = tb.tb_next


def _columns(entry: TracebackType, prepared: PreparedCode) -> tuple[int | None, int | None]:
    """The 1-based character columns of the failing expression, when Python recorded them."""
    if entry.tb_lasti < 0:
        return None, None
    index = entry.tb_lasti // 2
    position = next(itertools.islice(entry.tb_frame.f_code.co_positions(), index, index + 1), None)
    line = prepared.line(entry.tb_lineno)
    if position is None or line is None or position[0] != entry.tb_lineno or position[2] is None:
        return None, None
    # Python counts UTF-8 bytes of the compiled (de-indented) line; count characters as written.
    encoded = line.encode()
    shift = prepared.column_offset

    def to_char(offset: int) -> int:
        return len(encoded[: offset + shift].decode(errors="replace")) + 1

    end = to_char(position[3]) if position[1] == entry.tb_lineno and position[3] is not None else None
    return to_char(position[2]), end


def _render_frames(frames: list[_Frame], prepared: PreparedCode) -> list[str]:
    """Python-style traceback lines for the program's own frames; outside runs become one note."""
    entries: list[list[str]] = []
    seen_own = False
    for own, run in itertools.groupby(frames, key=lambda frame: frame.own):
        group = list(run)
        if own:
            seen_own = True
            entries.extend(_frame_lines(frame, frame.source or prepared) for frame in group)
        elif seen_own:  # frames before the first own frame are the runner's: not the author's business
            count = f"{len(group)} frame{'s' if len(group) > 1 else ''}"
            entries.append([f"  [called {group[0].name}(), outside your code: {count} not shown]"])
    lines = ["Traceback (most recent call last):"] if entries else []
    for entry in _shorten(_collapse_repeats(entries)):
        lines.extend(entry)
    return lines


def _render_foreign(frames: list[_Frame]) -> list[str]:
    """Without a program to point into, name the frames only (never the files: they are ours)."""
    if not frames:
        return []
    return ["Traceback (most recent call last):", *(f"  line {f.line}, in {f.name}" for f in frames[-5:])]


def remember_run(prepared: PreparedCode) -> None:
    """Keep a session's program so that errors raised later in functions it defined show its lines.

    Each run of a session needs a filename of its own (``<code-3>``) for this to tell them apart.
    """
    _EARLIER_RUNS[prepared.filename] = prepared


_EARLIER_RUNS: dict[str, PreparedCode] = {}


def _frame_lines(frame: _Frame, prepared: PreparedCode) -> list[str]:
    """One own frame as Python prints it, with carets under the failing expression."""
    lines = [f'  File "{prepared.filename}", line {frame.line}, in {frame.name}']
    source_line = prepared.line(frame.line)
    if source_line is None or not source_line.strip():
        return lines
    block = _caret_block(source_line, frame.column, frame.end_column).rstrip("\n").split("\n")
    stripped_width = len(source_line.strip())
    if len(block) == 2 and block[1].count("^") >= stripped_width:
        block = block[:1]  # carets under the whole line say nothing
    return lines + block


def _collapse_repeats(entries: list[list[str]]) -> list[list[str]]:
    """Fold identical consecutive frames (recursion) as Python does: a few shown, then a count."""
    result: list[list[str]] = []
    for entry, run in itertools.groupby(entries):
        count = len(list(run))
        result.extend([entry] * min(count, _SHOWN_REPEATS))
        if count > _SHOWN_REPEATS:
            result.append([f"  [Previous line repeated {count - _SHOWN_REPEATS} more times]"])
    return result


def _shorten(entries: list[list[str]]) -> list[list[str]]:
    """Keep the outermost and innermost frames of a very deep traceback (mutual recursion)."""
    if len(entries) <= _FRAMES_HEAD + _FRAMES_TAIL:
        return entries
    hidden = len(entries) - _FRAMES_HEAD - _FRAMES_TAIL
    return [*entries[:_FRAMES_HEAD], [f"  [... {hidden} more frames ...]"], *entries[-_FRAMES_TAIL:]]


def _chain(exc: BaseException, prepared: PreparedCode | None) -> list[str]:
    """One line for each exception behind this one (``raise ... from``, or raised while handling)."""
    lines: list[str] = []
    seen = {id(exc)}
    current = exc
    while len(lines) < _CHAIN_DEPTH:
        cause = current.__cause__
        if cause is not None:
            intro = "The direct cause was"
        elif current.__context__ is not None and not current.__suppress_context__:
            cause, intro = current.__context__, "It happened while handling"
        else:
            break
        if id(cause) in seen:
            break
        seen.add(id(cause))
        own = [frame for frame in _frames(cause.__traceback__, prepared) if frame.own]
        where = f" (line {own[-1].line})" if own else ""
        lines.append(f"{intro} {_type_name(cause)}: {_message(cause)}{where}")
        current = cause
    return lines


def _type_name(exc: BaseException) -> str:
    """The exception class's name, even if a hostile metaclass makes the lookup fail."""
    try:
        return str(type(exc).__qualname__)
    except Exception:
        return "Exception"


def _message(exc: BaseException) -> str:
    """The exception's message, with a useful default for the exceptions that come without one."""
    if isinstance(exc, SystemExit):
        text = f"the program called sys.exit({_safe_str(exc.code, repr)})"
    else:
        text = _safe_str(exc, str) or next(
            (default for kind, default in _DEFAULT_MESSAGES.items() if isinstance(exc, kind)), ""
        )
    notes = getattr(exc, "__notes__", None)
    if isinstance(notes, list):
        text += "".join(f"\n{note}" for note in notes if isinstance(note, str))
    if isinstance(exc, BaseExceptionGroup):
        for sub in exc.exceptions[:_SUB_EXCEPTIONS]:
            text += f"\n  - {_type_name(sub)}: {_message(sub)}"
    return _clip(text, _MESSAGE_LIMIT)


def _safe_str(value: object, convert: Any) -> str:
    """``str`` or ``repr`` of a value that may be hostile."""
    try:
        return str(convert(value))
    except Exception:
        return f"<unprintable {type(value).__name__}>"


def _clip(text: str, limit: int) -> str:
    """At most ``limit`` characters of ``text``, saying how much was cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text) - limit} more characters)"
