"""Argument validation with ``jsonschema`` against the tool's raw input schema, before anything is sent.

Kernel only: the hub checks every call with it, and the kernel's type models hold one (``check=`` of
``typegen.build_tool_models``, which finds with it which parameters accept null). typegen names only its
face (``typegen.model.InputCheck``), so a worker, which builds its tools from the kernel's findings, never
loads jsonschema.

Validation reads the schema as the server sent it, not our translation, so a schema we could only type
as ``Any`` is still checked exactly. Errors name the tool, the field as the caller wrote it
(``items[2].name``) and what was expected, because the reader is often an LLM that will retry.

One keyword outside JSON Schema is honoured: OpenAPI 3.0's ``"nullable": true``, which servers built
from OpenAPI models send and mean as "null is also valid here" (the types say ``X | None`` for it too).

A schema from a server or a client is untrusted, and jsonschema left to its defaults fetches a ``$ref`` it
cannot find in the schema with ``urlopen``: a file on the kernel's host (whose content then shows in a
validation message) or any address, with no timeout, on the hub's event loop. Every check of such a schema
in the kernel compiles it with :func:`schema_validator` (here, ``output_check``, and ``serve.client_tools``
through this module), whose registry is empty: a reference resolves inside the schema (or to a metaschema
jsonschema ships) or not at all. :func:`refs_outside` finds those that point elsewhere, and
:func:`refs_not_inside` and :func:`outside_reference` say so, naming them.
"""

from __future__ import annotations

import functools
import itertools
import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..core.errors import ToolArgumentError
from ..core.toolspec import ToolSpec
from ..typegen.text import clip

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError
    from jsonschema.protocols import Validator

    from ..typegen.model import ToolModel

__all__ = [
    "ArgumentValidator",
    "outside_reference",
    "refs_not_inside",
    "refs_outside",
    "schema_validator",
    "validate_arguments",
]

log = logging.getLogger(__name__)

_PY_TYPES = {
    "string": "str",
    "integer": "int",
    "number": "float",
    "boolean": "bool",
    "null": "None",
    "array": "list",
    "object": "dict",
}
# Errors looked at per call: enough to pick the most relevant one and mention a few more.
_MAX_ERRORS = 20
_MORE_SHOWN = 3


class ArgumentValidator:
    """A compiled jsonschema validator for one tool's input schema (built once, used for every call).

    ``function_name`` and ``parameter_names`` (wire name -> Python name) let messages speak the caller's
    language. If the schema is not valid JSON Schema, validation is switched off: :attr:`problem` says
    why, and :attr:`warning` says it for the logs, naming the tool. If the schema breaks jsonschema only
    when used (a ``$ref`` outside it, which is never fetched), the calls whose arguments reach that part
    go out unchecked, and :attr:`warning` names the reference. Either way the server still checks its
    own input.
    """

    def __init__(
        self,
        spec: ToolSpec,
        *,
        function_name: str | None = None,
        parameter_names: Mapping[str, str] | None = None,
    ) -> None:
        self.spec = spec
        self.tool = function_name or spec.name
        self._names = dict(parameter_names or {})
        self.warning: str | None = None
        self.problem: str | None = None
        """Why validation is off (``inputSchema cannot be used for validation (...)``), or None."""
        self._validator: Validator | None = None
        try:
            self._validator = schema_validator(spec.input_schema, nullable=True)
        # The schema is untrusted input and jsonschema can fail on it in many ways (SchemaError,
        # RecursionError on absurd nesting, TypeError on odd $schema values); all mean "cannot check".
        except Exception as exc:
            self.problem = self._unusable(exc)
            self.warning = f"{spec.qualified_name}: {self.problem}; arguments are sent unchecked"
            return
        try:
            outside = refs_outside(spec.input_schema, type(self._validator))
        except Exception:  # only a warning is at stake: validate() still says what it meets
            outside = []
        if outside:  # said now, for the logs; the calls that reach them are sent unchecked (validate)
            self.warning = (
                f"{spec.qualified_name}: inputSchema: {refs_not_inside(outside)}; arguments that reach "
                f"{'it' if len(outside) == 1 else 'them'} are sent unchecked"
            )

    @property
    def enabled(self) -> bool:
        """Whether calls are checked (False when jsonschema could not compile the schema)."""
        return self._validator is not None

    @staticmethod
    def _unusable(exc: BaseException) -> str:
        """What is wrong with a schema jsonschema cannot work with."""
        if (outside := outside_reference(exc)) is not None:  # names the reference whole
            return f"inputSchema cannot be used for validation ({outside})"
        reason = getattr(exc, "message", None) or str(exc) or type(exc).__name__
        return f"inputSchema cannot be used for validation ({clip(str(reason), 160)})"

    def accepts_null(self, schema: Any) -> bool | None:
        """Whether ``schema`` (a part of the input schema, such as one property's) accepts null.

        References in ``schema`` resolve against the whole input schema. None means nobody can tell:
        validation is off, or jsonschema fails on this part.
        """
        if self._validator is None:
            return None
        try:
            return bool(self._validator.evolve(schema=schema).is_valid(None))
        except Exception:  # untrusted schema: a remote $ref, a garbage subschema...
            return None

    def validate(self, arguments: Mapping[str, Any]) -> None:
        """Check wire ``arguments``; raise ToolArgumentError naming the field and what was expected.

        Raises:
            ToolArgumentError: the arguments do not satisfy the input schema.
        """
        if self._validator is None:
            return
        try:
            errors = list(itertools.islice(self._validator.iter_errors(dict(arguments)), _MAX_ERRORS))
        # A $ref outside the schema (never fetched) or a broken one fails only here, at use, and only for
        # arguments that reach it: this call goes out unchecked (the server still checks), later calls are
        # checked again.
        except Exception as exc:
            warning = (
                f"{self.spec.qualified_name}: {self._unusable(exc)}; some arguments could not be checked"
            )
            if (
                warning != self.warning
            ):  # logged once per tool and reason (the hub keeps one validator a tool)
                log.warning("%s", warning)
            self.warning = warning
            return
        if not errors:
            return
        from jsonschema.exceptions import best_match

        first = best_match(errors)
        assert first is not None  # errors is not empty
        field, text = self.explain(first)
        lines = [f"{self.tool}(): {text}"]
        others = [e for e in errors if e is not first]
        for error in others[:_MORE_SHOWN]:
            lines.append(f"  also: {self.explain(error)[1]}")
        if len(others) > _MORE_SHOWN:
            lines.append(f"  ... and {len(others) - _MORE_SHOWN} more")
        raise ToolArgumentError("\n".join(lines), tool=self.tool, field=field)

    def explain(self, error: ValidationError) -> tuple[str | None, str]:
        """The field path (as the caller names it) and a sentence saying what was wrong."""
        path: list[str | int] = list(error.absolute_path)
        kind = error.validator
        expected = error.validator_value
        instance = error.instance
        if kind == "required" and isinstance(expected, list) and isinstance(instance, dict):
            missing = [name for name in expected if isinstance(name, str) and name not in instance]
            if missing:
                required = self.field_path([*path, missing[0]])
                return required, f"argument {required} is required"
        if kind == "additionalProperties" and isinstance(instance, dict) and isinstance(error.schema, dict):
            known = error.schema.get("properties")
            unexpected = [k for k in instance if not isinstance(known, dict) or k not in known]
            if unexpected and "patternProperties" not in error.schema:
                extra = self.field_path([*path, unexpected[0]])
                return extra, f"argument {extra} is not accepted (no such property)"
        field = self.field_path(path) if path else None
        subject = f"argument {field}" if field else "the arguments"
        if kind == "enum" and isinstance(expected, list):
            shown = ", ".join(_short(v) for v in expected[:10])
            more = f", ... ({len(expected)} values)" if len(expected) > 10 else ""
            return field, f"{subject} must be one of {shown}{more}; got {_short(instance)}"
        if kind == "const":
            return field, f"{subject} must be {_short(expected)}; got {_short(instance)}"
        if kind == "type":
            names = expected if isinstance(expected, list) else [expected]
            wanted = " or ".join(_PY_TYPES.get(n, str(n)) if isinstance(n, str) else repr(n) for n in names)
            return (
                field,
                f"{subject} must be of type {wanted}; got {_short(instance)} ({type(instance).__name__})",
            )
        return field, f"{subject}: {clip(error.message, 300)}"

    def field_path(self, path: list[str | int]) -> str:
        """``items[2].name``: the first segment under its Python parameter name, keys dotted or quoted."""
        text = ""
        for i, part in enumerate(path):
            if isinstance(part, int):
                text += f"[{part}]"
            elif i == 0:
                text = (
                    self._names.get(part, part) if part.isidentifier() or part in self._names else repr(part)
                )
            elif part.isidentifier():
                text += f".{part}"
            else:
                text += f"[{part!r}]"
        return text


def refs_not_inside(refs: Sequence[str]) -> str:
    """What to say of ``$ref`` values that point outside their schema (a file, an address): never fetched."""
    shown = ", ".join(json.dumps(clip(ref, 200)) for ref in refs[:3])
    more = f" (and {len(refs) - 3} more)" if len(refs) > 3 else ""
    said = f"$ref {shown} is" if len(refs) == 1 else f"$refs {shown}{more} are"
    return (
        f"{said} not inside the schema: references are resolved only within it, never fetched from a file or "
        "the network"
    )


def outside_reference(exc: BaseException) -> str | None:
    """What to say of the reference when ``exc`` is jsonschema failing to resolve one (else None)."""
    from referencing.exceptions import Unresolvable

    if isinstance(exc, Unresolvable):  # jsonschema's _WrappedReferencingError is one too, and has its ref
        return refs_not_inside([str(exc.ref)])
    return None


def schema_validator(schema: Any, *, nullable: bool = False) -> Validator:
    """A jsonschema validator for a schema a server or a client sent: checked, and never fetching a ``$ref``.

    The class follows the schema's ``$schema`` (Draft 2020-12 when there is none); ``nullable`` extends it
    to read OpenAPI's ``"nullable": true``. Its registry is empty, so a reference resolves inside the
    schema (or to a metaschema jsonschema ships) or not at all: validating what reaches one that points
    elsewhere raises ``referencing.exceptions.Unresolvable`` (:func:`outside_reference` says it).

    Raises:
        jsonschema.SchemaError: ``schema`` is not valid JSON Schema.
        Exception: anything else jsonschema trips on (RecursionError on absurd nesting...).
    """
    # Imported here: jsonschema and its format checkers are a large import, paid with the first tool's
    # model rather than when the hub is imported.
    from jsonschema import Draft202012Validator
    from jsonschema.validators import validator_for
    from referencing import Registry

    cls = validator_for(schema, default=Draft202012Validator)
    cls.check_schema(schema)
    compiled: Validator = (_reading_nullable(cls) if nullable else cls)(schema, registry=Registry())
    return compiled


def refs_outside(schema: Any, cls: type[Validator] | None = None) -> list[str]:
    """Each ``$ref`` and ``$dynamicRef`` in ``schema`` that does not resolve inside it, in document order.

    Resolved as ``cls`` (the schema's dialect by default) would at validation, with every ``$id`` scope,
    but without fetching anything: only the schema itself and jsonschema's metaschemas are known.
    """
    from jsonschema import Draft202012Validator
    from jsonschema.validators import validator_for
    from jsonschema_specifications import REGISTRY as METASCHEMAS  # type: ignore[import-untyped]
    from referencing import Resource, Specification
    from referencing.exceptions import Unresolvable
    from referencing.jsonschema import specification_with

    if cls is None:
        cls = validator_for(schema, default=Draft202012Validator)
    specification: Specification[Any] = specification_with(
        str(cls.META_SCHEMA.get("$schema", "")), default=Specification.OPAQUE
    )
    outside: list[str] = []

    def walk(resource: Resource[Any], resolver: Any) -> None:
        contents = resource.contents
        if isinstance(contents, Mapping):
            for keyword in ("$ref", "$dynamicRef"):
                ref = contents.get(keyword)
                if isinstance(ref, str):
                    try:
                        resolver.lookup(ref)
                    except Unresolvable:
                        outside.append(ref)
        for subresource in resource.subresources():
            walk(subresource, resolver.in_subresource(subresource))

    root = specification.create_resource(schema)
    walk(root, METASCHEMAS.resolver_with_root(root))
    return outside


@functools.cache
def _reading_nullable(cls: type[Validator]) -> type[Validator]:
    """``cls`` extended so that null is valid wherever a schema says ``"nullable": true``.

    Every keyword check of such a schema lets ``None`` through, so the keyword works next to ``type``,
    ``enum``, ``$ref`` or ``anyOf`` alike; everything else is ``cls`` unchanged.
    """

    def lenient(check: Any) -> Any:
        def keyword(
            validator: Validator, value: Any, instance: Any, schema: Any
        ) -> Iterable[ValidationError]:
            if instance is None and isinstance(schema, Mapping) and schema.get("nullable") is True:
                return ()
            return check(validator, value, instance, schema) or ()

        return keyword

    from jsonschema.validators import extend

    checks = {name: lenient(check) for name, check in cls.VALIDATORS.items()}
    extended: type[Validator] = extend(cls, checks)  # type: ignore[no-untyped-call]
    return extended


def _short(value: Any) -> str:
    """A value for an error message: its repr, cut short."""
    try:
        text = repr(value)
    except RecursionError:
        text = f"<{type(value).__name__}>"
    return clip(text, 60)


def validate_arguments(model: ToolModel, arguments: Mapping[str, Any]) -> None:
    """Check wire ``arguments`` against the model's input schema (compiled once, in the model).

    Raises:
        ToolArgumentError: the arguments do not satisfy the input schema.
    """
    validator = model.validator or ArgumentValidator(model.spec, function_name=model.function_name)
    validator.validate(arguments)
