"""The type model of one tool: built once from its ToolSpec, read by stubs, signatures and binding."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from ..core.toolspec import ToolSpec
from .naming import assign_function_names, assign_parameter_names, function_name, type_name
from .pytypes import AnyType, ClassType, Field, JsonScalar, PyType, accepts_none
from .schema import becomes_class, merge_all_of, resolve_pointer
from .translate import ClassNames, SchemaTranslator

__all__ = [
    "InputCheck",
    "InputCheckFactory",
    "Param",
    "ToolModel",
    "build_tool_model",
    "build_tool_models",
    "inferred_note",
    "mark_inferred",
]


@dataclass(frozen=True)
class Param:
    """One parameter of a tool function.

    ``name`` is the Python name, ``wire_name`` the property name sent to the server. ``default`` is what
    the signature shows for an optional parameter (the schema's default when it is a short literal, else
    None); an optional parameter that is not passed is left out of the call, so the server applies its
    own default. ``nullable`` says whether the property's schema accepts null, so that an explicit
    ``None`` is sent rather than left out (for a parameter typed ``Any`` only jsonschema can tell).
    """

    name: str
    wire_name: str
    type: PyType
    required: bool
    default: JsonScalar = None
    description: str = ""
    nullable: bool = False


_ANY = AnyType()


class InputCheck(Protocol):
    """A compiled check of one tool's input schema: what a model reads of it and keeps.

    The kernel's is ``hub.validation.ArgumentValidator`` (jsonschema). typegen names only this face, so
    a worker, which builds its tools from the nullability the kernel found, needs no jsonschema for them.
    """

    warning: str | None
    """What to tell the logs about the schema (validation off, or a reference that failed), or None."""
    problem: str | None
    """Why validation is off for the tool, or None."""

    def accepts_null(self, schema: Any) -> bool | None:
        """Whether a part of the input schema accepts null; None when nobody can tell."""

    def validate(self, arguments: Mapping[str, Any]) -> None:
        """Check wire arguments; raises ``ToolArgumentError`` naming the field."""


class InputCheckFactory(Protocol):
    """Builds a tool's :class:`InputCheck` (``hub.validation.ArgumentValidator`` is one)."""

    def __call__(
        self,
        spec: ToolSpec,
        *,
        function_name: str | None = ...,
        parameter_names: Mapping[str, str] | None = ...,
    ) -> InputCheck:
        """The check of ``spec``'s input schema; messages name ``function_name`` and the Python names."""


@dataclass(frozen=True)
class ToolModel:
    """Everything code mode knows about one tool's Python face, from one translation of its schemas.

    ``params`` lists required parameters first (they may be passed positionally), then optional ones
    (keyword-only). ``kwargs_name`` is set when the input schema accepts further properties, which are
    then taken as ``**kwargs`` of type ``kwargs_type``. ``input_type`` is the input as one class (named
    ``input_type_name``, ``<Tool>Input``). ``output_type`` is None when the tool has no output schema;
    ``output_type_name`` is the name of the result class when the result is one (``<Tool>Output``, or the
    ``$defs`` name when the output schema is a ``$ref``), else None. ``warnings`` lists what could not be
    translated precisely.
    """

    spec: ToolSpec
    function_name: str
    input_type_name: str
    output_type_name: str | None
    params: tuple[Param, ...]
    input_type: ClassType
    output_type: PyType | None
    kwargs_name: str | None = None
    kwargs_type: PyType = _ANY
    warnings: tuple[str, ...] = ()
    validator: InputCheck | None = field(default=None, repr=False, compare=False)
    renamed_from: str | None = None
    """The name the tool would have had, when that is one code mode defines itself (``parallel``)."""

    @property
    def inferred_calls(self) -> int:
        """How many results the result type was inferred from; 0 when it was not inferred.

        A tool without an outputSchema gets a result type inferred from the results it returned
        (``ToolSpec.inferred_output``): it types stubs and ``help()``, nothing more.
        """
        spec = self.spec
        return spec.inferred_calls if spec.output_schema is None and spec.inferred_output is not None else 0

    @property
    def nullable(self) -> tuple[str, ...]:
        """Wire names of the parameters an explicit ``None`` is sent for (their schema accepts null)."""
        return tuple(p.wire_name for p in self.params if p.nullable)

    def descriptor(self) -> dict[str, Any]:
        """The tool as JSON (its spec plus its Python name): how a worker process learns it."""
        return {
            "server": self.spec.server,
            "name": self.spec.name,
            "function_name": self.function_name,
            "description": self.spec.description,
            "title": self.spec.title,
            "input_schema": self.spec.input_schema,
            "output_schema": self.spec.output_schema,
            "nullable": list(self.nullable),
            "inferred_output": self.spec.inferred_output if self.inferred_calls else None,
            "inferred_calls": self.inferred_calls,
        }


def _unwrap_root(schema: Any, warnings: list[str], where: str) -> dict[str, Any]:
    """The input schema as one object schema: root ``$ref`` followed, ``allOf`` merged, alternatives joined.

    Alternatives (``anyOf``/``oneOf``) at the top cannot be one Python signature; their parameters are
    offered together, each required only if every alternative requires it. Validation still applies the
    exact rule, since it runs on the raw schema.
    """
    root = schema
    for _ in range(8):  # a chain of root references longer than this is not worth following
        if not isinstance(schema, dict):
            return {}
        if isinstance(schema.get("$ref"), str):
            target = resolve_pointer(root, schema["$ref"])
            if not isinstance(target, dict) or target is schema:
                warnings.append(f"{where}: top-level $ref does not resolve to an object schema")
                return {k: v for k, v in schema.items() if k != "$ref"}
            schema = {**{k: v for k, v in schema.items() if k != "$ref"}, **target}
        elif "allOf" in schema:
            merged = merge_all_of(schema, root)
            if merged is None:
                warnings.append(f"{where}: top-level allOf too complex; only its own properties are used")
                return {k: v for k, v in schema.items() if k != "allOf"}
            schema = merged
        elif "anyOf" in schema or "oneOf" in schema:
            schema = _join_alternatives(schema, root)
            warnings.append(f"{where}: top-level alternatives offered as one parameter list")
        else:
            declared = schema.get("type", "object")
            if declared != "object" and not (isinstance(declared, list) and "object" in declared):
                warnings.append(f"{where}: not an object schema, so the tool takes no parameters")
            return schema
    return schema if isinstance(schema, dict) else {}


def _join_alternatives(schema: dict[str, Any], root: Any) -> dict[str, Any]:
    """Properties of every alternative together; required only what all alternatives require."""
    base = {k: v for k, v in schema.items() if k not in ("anyOf", "oneOf")}
    branches = schema.get("anyOf", schema.get("oneOf"))
    merged_branches = (
        [merge_all_of({"allOf": [base, b]}, root) for b in branches] if isinstance(branches, list) else []
    )
    usable = [b for b in merged_branches if b is not None]
    if not usable:
        return base
    properties: dict[str, Any] = {}
    for branch in usable:
        branch_properties = branch.get("properties")
        for name, sub in (branch_properties if isinstance(branch_properties, dict) else {}).items():
            old = properties.get(name)
            properties[name] = sub if old is None or old == sub else {"anyOf": [old, sub]}
    required_sets = [
        {r for r in b.get("required", []) if isinstance(r, str)}
        if isinstance(b.get("required"), list)
        else set()
        for b in usable
    ]
    required = set.intersection(*required_sets)
    joined = {**base, "type": "object", "properties": properties, "required": sorted(required)}
    return {**joined, **_join_extras(usable)}


def _null_as_extra_key(root: Any, name: str, validator: InputCheck) -> bool:
    """Whether a top-level alternative that does not declare ``name`` takes it, as an extra key, as null.

    Such a None is valid through that alternative even when those that declare ``name`` refuse it, so the
    function must send it rather than drop it. False when no alternative says so (the property decides).
    """
    branches = root.get("anyOf", root.get("oneOf")) if isinstance(root, dict) else None
    for branch in branches if isinstance(branches, list) else ():
        if isinstance(branch, dict) and isinstance(branch.get("$ref"), str):
            branch = resolve_pointer(root, branch["$ref"])
        if not isinstance(branch, dict):
            continue
        declared = branch.get("properties")
        rule = None if isinstance(declared, dict) and name in declared else _extra_rule(branch, name)
        if rule is not None and validator.accepts_null(rule):
            return True
    return False


def _extra_rule(branch: dict[str, Any], name: str) -> Any:
    """The schema ``branch`` holds an undeclared key ``name`` to, when it says outright it takes extras.

    A missing ``additionalProperties`` counts as no (see ``_accepts_extra``).
    """
    matching = []
    for pattern, sub in _patterns(branch).items():
        try:
            if re.search(pattern, name):
                matching.append(sub)
        except (re.error, TypeError):  # a pattern Python cannot read: jsonschema decides at validation
            continue
    if matching:
        return matching[0] if len(matching) == 1 else {"allOf": matching}
    additional = branch.get("additionalProperties")
    return additional if additional is True or isinstance(additional, dict) else None


def _join_extras(branches: list[dict[str, Any]]) -> dict[str, Any]:
    """``patternProperties`` / ``additionalProperties`` for the keys any alternative takes beyond its own.

    Empty when no alternative welcomes extra keys (see :func:`_accepts_extra`), so the base's own
    keywords stand. An alternative with patterns that does not close ``additionalProperties`` takes
    any other key too, as JSON Schema reads it.
    """
    patterns: dict[str, Any] = {}
    others: list[Any] = []
    for branch in branches:
        if not _accepts_extra(branch):
            continue
        for pattern, sub in _patterns(branch).items():
            old = patterns.get(pattern)
            patterns[pattern] = sub if old is None or old == sub else {"anyOf": [old, sub]}
        additional = branch.get("additionalProperties", True)
        if additional is not False:
            others.append(additional)
    if not patterns and not others:
        return {}
    joined: dict[str, Any] = {"patternProperties": patterns} if patterns else {}
    if any(not isinstance(other, dict) for other in others):
        joined["additionalProperties"] = True
    elif others:
        joined["additionalProperties"] = others[0] if len(others) == 1 else {"anyOf": others}
    else:
        joined["additionalProperties"] = False
    return joined


def _accepts_extra(schema: dict[str, Any]) -> bool:
    """Whether the input schema says outright that further properties are welcome (``**kwargs``).

    A missing ``additionalProperties`` technically allows extras too, but almost no tool means that,
    and refusing unknown keyword arguments catches typos before anything is sent.
    """
    additional = schema.get("additionalProperties")
    return additional is True or isinstance(additional, dict) or bool(_patterns(schema))


def _patterns(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema's ``patternProperties``, or an empty dict when it has none (or garbage)."""
    patterns = schema.get("patternProperties")
    return patterns if isinstance(patterns, dict) else {}


def build_tool_model(
    spec: ToolSpec,
    function_name: str,
    *,
    check: InputCheckFactory | None,
    taken_type_names: Collection[str] = (),
    nullable: Collection[str] | None = None,
) -> ToolModel:
    """Translate a tool's schemas once into its ToolModel, under the given function name.

    Never raises for a bad schema: what cannot be translated is typed ``Any`` and listed in
    ``warnings``, and an input schema ``check`` cannot compile switches off validation (also a warning).
    ``taken_type_names`` are class names other tools already use (see :func:`build_tool_models`).
    Which parameters accept null: ``nullable`` (wire names), when given, says so, as a model built by the
    kernel found (:attr:`ToolModel.nullable`); a worker process builds its tool functions that way, with
    no ``check``, and the kernel validates every call. Otherwise ``check`` (the kernel's
    ``hub.validation.ArgumentValidator``) is built and asked, and the model keeps it as ``validator``;
    with neither, the types decide.
    """
    stem = type_name(function_name)
    roots = ClassNames(taken_type_names)
    input_name = roots.claim(f"{stem}Input")
    output_name = roots.claim(f"{stem}Output")
    # Input and output are separate documents: a $defs entry both use may get the same name in each,
    # and the stubs then define it once (see render_stubs).
    taken = {*taken_type_names, input_name, output_name}
    warnings: list[str] = []
    schema = _unwrap_root(spec.input_schema, warnings, f"{spec.qualified_name} inputSchema")
    translator = SchemaTranslator(
        spec.input_schema, where=f"{spec.qualified_name} inputSchema", names=ClassNames(taken)
    )
    translator.begin_root(input_name)
    fields = translator.fields(schema, "", stem, 0)
    extra = (translator.extra_type(schema, "", stem, 0) or AnyType()) if _accepts_extra(schema) else None
    python_names = assign_parameter_names([f.wire_name for f in fields])
    kwargs_name = assign_parameter_names(["kwargs"], taken=python_names.values())["kwargs"]
    validator: InputCheck | None = None
    if nullable is not None:
        known = frozenset(nullable)
        params = [_param(f, python_names[f.wire_name], f.wire_name in known) for f in fields]
    elif check is None:
        params = [_param(f, python_names[f.wire_name], None) for f in fields]
    else:
        validator = check(spec, function_name=function_name, parameter_names=python_names)
        properties = schema.get("properties")
        property_schemas: dict[str, Any] = properties if isinstance(properties, dict) else {}
        params = [
            _param(
                f,
                python_names[f.wire_name],
                True
                if _null_as_extra_key(spec.input_schema, f.wire_name, validator)
                else validator.accepts_null(property_schemas.get(f.wire_name, True)),
            )
            for f in fields
        ]
    params = [p for p in params if p.required] + [p for p in params if not p.required]
    input_type = ClassType(input_name, fields, description="", extra=extra)

    output_type: PyType | None = None
    output_type_name: str | None = None
    output_warnings: list[str] = []
    if spec.output_schema is not None:
        where = f"{spec.qualified_name} outputSchema"
        out = SchemaTranslator(spec.output_schema, where=where, names=ClassNames(taken))
        # A wrapped value ({"result": value}) is returned unwrapped, so it is typed as its one field.
        returned = spec.output_schema["properties"]["result"] if spec.wraps_result else spec.output_schema
        out.begin_root(output_name if becomes_class(returned) else None)
        out.stems[output_name] = stem
        output_type = out.translate(returned, "", output_name, 0, output_name)
        output_type_name = output_type.name if isinstance(output_type, ClassType) else None
        output_warnings = out.warnings
    elif spec.inferred_output is not None:
        # Not the server's word: only how results looked so far. Its warnings would be noise (a ``{}``
        # left where inference stopped is Any on purpose), so they are not kept.
        returned = mark_inferred(spec.inferred_output, spec.inferred_calls)
        out = SchemaTranslator(
            returned, where=f"{spec.qualified_name} inferred result", names=ClassNames(taken)
        )
        out.begin_root(output_name if becomes_class(returned) else None)
        out.stems[output_name] = stem
        output_type = out.translate(returned, "", output_name, 0, output_name)
        output_type_name = output_type.name if isinstance(output_type, ClassType) else None

    all_warnings = warnings + translator.warnings + output_warnings
    if validator is not None and validator.warning:
        all_warnings.append(validator.warning)
    return ToolModel(
        spec=spec,
        function_name=function_name,
        input_type_name=input_name,
        output_type_name=output_type_name,
        params=tuple(params),
        input_type=input_type,
        output_type=output_type,
        kwargs_name=kwargs_name if extra is not None else None,
        kwargs_type=extra or AnyType(),
        warnings=tuple(all_warnings),
        validator=validator,
    )


def inferred_note(calls: int) -> str:
    """What an inferred result type says of itself (its class docstring, ``help()``)."""
    return f"Inferred from {calls} call{'s' if calls != 1 else ''}: fields seen in results (no outputSchema)."


def mark_inferred(schema: dict[str, Any], calls: int) -> dict[str, Any]:
    """``schema`` with :func:`inferred_note` as the description of its outermost records.

    The outermost records are the result itself, a list's items, or the branches of a union, one level
    down: the classes a reader meets first.
    """
    note = inferred_note(calls)

    def mark(node: Any, levels: int) -> Any:
        if not isinstance(node, dict) or levels < 0:
            return node
        if isinstance(node.get("properties"), dict):
            return {**node, "description": note}
        if isinstance(node.get("items"), dict):
            return {**node, "items": mark(node["items"], levels - 1)}
        if isinstance(node.get("anyOf"), list):
            return {**node, "anyOf": [mark(branch, levels - 1) for branch in node["anyOf"]]}
        return node

    marked: dict[str, Any] = mark(schema, 2)
    return marked


def _param(field: Field, name: str, accepts_null: bool | None) -> Param:
    """A Param from a field of the input object; ``accepts_null`` is jsonschema's word (None: unknown).

    Without that word the type decides, and a schema that allows anything (``{}``) allows null.
    """
    if accepts_null is None:
        accepts_null = accepts_none(field.type) or field.type == AnyType()
    return Param(
        name=name,
        wire_name=field.wire_name,
        type=field.type,
        required=field.required,
        default=None if field.required else field.default,
        description=field.description,
        nullable=accepts_null,
    )


def renamed_warning(model: ToolModel, plain: str) -> str:
    """What to tell a user whose tool was renamed because code mode defines its name itself."""
    return (
        f"{model.spec.qualified_name} is {model.function_name}() in code mode: {plain} is a name code mode "
        "defines itself (give its server a prefix to choose another name)"
    )


def build_tool_models(
    specs: Iterable[ToolSpec],
    *,
    check: InputCheckFactory | None,
    prefixes: Mapping[str, str] | None = None,
    reserved: Collection[str] = (),
) -> list[ToolModel]:
    """Name every tool (see :func:`assign_function_names`) and build its model, in the order given.

    ``check`` finds which parameters accept null and is kept as each model's validator (the kernel passes
    ``hub.validation.ArgumentValidator``; None: the types decide, see :func:`build_tool_model`).

    The ``<Tool>Input`` / ``<Tool>Output`` names of one tool are kept clear of every other tool's (and
    of the function names), so they are the names the stubs use. Nested class names may repeat across
    tools: the stubs define a class shared verbatim once and rename the rest.

    A tool whose name is one code mode defines itself (``reserved``) gets a trailing underscore, and a
    warning in its model saying so.

    Raises:
        ToolNameCollisionError: two tools would share a function name.
    """
    spec_list = list(specs)
    names = assign_function_names(spec_list, prefixes=prefixes, reserved=reserved)
    taken: set[str] = set(names.values())
    models: list[ToolModel] = []
    for spec in spec_list:
        model = build_tool_model(spec, names[(spec.server, spec.name)], check=check, taken_type_names=taken)
        plain = function_name(spec.name, (prefixes or {}).get(spec.server, ""))
        if plain != model.function_name:
            model = replace(
                model, warnings=(*model.warnings, renamed_warning(model, plain)), renamed_from=plain
            )
        taken.add(model.input_type_name)
        taken.add(f"{type_name(model.function_name)}Output")
        models.append(model)
    return models
