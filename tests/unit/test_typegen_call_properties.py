"""Property test: every arguments object the input schema accepts can be passed to the tool function.

Schemas are generated with the shapes typed functions used to refuse: ``"nullable": true``, parameters
typed ``Any`` whose schema accepts null, top-level ``anyOf``/``oneOf`` whose alternatives take extra keys,
``additionalProperties`` and ``patternProperties``, property names that are keywords or collide after
conversion (``class``, ``class_``, ``user-id``, ``user_id``), and required/optional mixes.

Each schema comes with a strategy for its instances, and ``jsonschema`` decides which drawn instances
are valid: ``nullable`` is not JSON Schema, so the judge reads each schema in a standard spelling
(``"nullable": true`` as an ``anyOf`` with ``null``). A valid instance is then passed as a Python call
(required values positionally or by name, optional ones by Python or wire name, extra keys as keywords)
through ``bind_arguments`` and the hub's ``ArgumentValidator``, the path of every tool function in the
kernel and in the worker, and must come out as exactly the instance.

One case is left out on purpose: an extra key equal to the Python name of a renamed parameter that the
call does not pass (``{"class_": 2}`` next to a property ``class``). Written as a keyword, ``class_`` is
that parameter, as the signature shows; docs/typegen.md says so.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from codemode_kernel.core.toolspec import ToolSpec
from codemode_kernel.hub.validation import ArgumentValidator
from codemode_kernel.typegen import bind_arguments, build_tool_model

# A generated value schema: (schema the server sends, the same in standard JSON Schema, valid values).
Value = tuple[dict[str, Any], dict[str, Any], st.SearchStrategy[Any]]

DEFS = {"Count": {"type": "integer", "minimum": 0}, "NotText": {"not": {"type": "string"}}}

json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.text(max_size=3)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=2), st.dictionaries(st.text(max_size=2), inner, max_size=2)
    ),
    max_leaves=4,
)
texts = st.text(max_size=4)
ints = st.integers(-5, 5)


def same(schema: dict[str, Any], values: st.SearchStrategy[Any]) -> Value:
    return schema, schema, values


VALUES: list[Value] = [
    same({"type": "string"}, texts),
    same({"type": "integer"}, ints),
    same({"type": ["integer", "null"]}, st.one_of(st.none(), ints)),
    same({"anyOf": [{"type": "string"}, {"type": "null"}]}, st.one_of(st.none(), texts)),
    same({"enum": ["a", "b", None]}, st.sampled_from(["a", "b", None])),
    # OpenAPI's nullable, next to a type, an enum and a reference
    ({"type": "string", "nullable": True}, {"type": ["string", "null"]}, st.one_of(st.none(), texts)),
    (
        {"enum": ["a", "b"], "nullable": True},
        {"enum": ["a", "b", None]},
        st.sampled_from(["a", "b", None]),
    ),
    (
        {"$ref": "#/$defs/Count", "nullable": True},
        {"anyOf": [{"$ref": "#/$defs/Count"}, {"type": "null"}]},
        st.one_of(st.none(), st.integers(0, 9)),
    ),
    # typed Any: some accept null, one does not
    same({}, json_values),
    same({"description": "anything"}, json_values),
    same({"not": {"type": "string"}}, st.one_of(st.none(), ints, st.booleans())),
    same({"minLength": 2}, st.one_of(st.none(), ints, texts)),
    same({"$ref": "#/$defs/NotText"}, st.one_of(st.none(), ints)),
    same({"not": {"type": "null"}}, st.one_of(ints, texts)),
]
values = st.sampled_from(VALUES)

# Keywords, names that collide after conversion, the **kwargs name, and plain ones.
PROPERTY_NAMES = ["q", "lang", "class", "class_", "from", "user-id", "user_id", "kwargs", "2fa", "x-tag"]
# Extra keys include the Python names renamed properties get (class_, from_, user_id, p_2fa, kwargs_2).
EXTRA_KEYS = ["class_", "from_", "user_id", "p_2fa", "kwargs", "kwargs_2", "x-extra", "x_1", "zz", "lang"]

# Ways an object takes extra keys: (schema keywords, key filter, value strategy); None takes none.
OPENINGS: list[tuple[dict[str, Any], Any, st.SearchStrategy[Any]] | None] = [
    None,
    ({"additionalProperties": True}, lambda key: True, json_values),
    ({"additionalProperties": {"type": "integer"}}, lambda key: True, ints),
    (
        {"patternProperties": {"_": {"type": ["integer", "null"]}}, "additionalProperties": False},
        lambda key: "_" in key,
        st.one_of(st.none(), ints),
    ),
    ({"patternProperties": {"^x": {"type": "string"}}}, lambda key: True, texts),
]


@st.composite
def alternatives(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any], st.SearchStrategy[Any]]:
    """One object schema (as sent, and standard) with a strategy for its instances."""
    props: dict[str, Value] = draw(st.dictionaries(st.sampled_from(PROPERTY_NAMES), values, max_size=4))
    required = [name for name in props if draw(st.booleans())]
    opening = draw(st.sampled_from(OPENINGS))
    sent: dict[str, Any] = {"properties": {n: v[0] for n, v in props.items()}, "required": required}
    standard: dict[str, Any] = {"properties": {n: v[1] for n, v in props.items()}, "required": required}
    if opening is None:
        closed = {"additionalProperties": False} if draw(st.booleans()) else {}
        sent.update(closed)
        standard.update(closed)
        extras: st.SearchStrategy[dict[str, Any]] = st.just({})
    else:
        keywords, accepts, extra_values = opening
        sent.update(keywords)
        standard.update(keywords)
        keys = [k for k in EXTRA_KEYS if k not in props and accepts(k)]
        extras = st.dictionaries(st.sampled_from(keys), extra_values, max_size=3) if keys else st.just({})
    fixed = st.fixed_dictionaries(
        {n: v[2] for n, v in props.items() if n in required},
        optional={n: v[2] for n, v in props.items() if n not in required},
    )
    instances = st.tuples(fixed, extras).map(lambda pair: {**pair[1], **pair[0]})
    return sent, standard, instances


@st.composite
def input_cases(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    """An input schema as a server sends it, and an arguments object jsonschema says it accepts."""
    branches = draw(st.lists(alternatives(), min_size=1, max_size=3))
    combinator = draw(st.sampled_from([None, "anyOf", "oneOf"]))
    if combinator is None or (len(branches) == 1 and draw(st.booleans())):
        sent, standard, instances = branches[0]
        sent, standard = {"type": "object", **sent}, {"type": "object", **standard}
    else:
        key = combinator or "anyOf"
        sent = {"type": "object", key: [b[0] for b in branches]}
        standard = {"type": "object", key: [b[1] for b in branches]}
        instances = st.one_of([b[2] for b in branches])
    sent["$defs"] = standard["$defs"] = DEFS
    instance = draw(instances)
    assume(Draft202012Validator(standard).is_valid(instance))  # oneOf: exactly one alternative matches
    return sent, instance


@settings(
    max_examples=400,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(case=input_cases(), data=st.data())
def test_every_valid_instance_passes_through_the_function_unchanged(
    case: tuple[dict[str, Any], dict[str, Any]], data: st.DataObject
) -> None:
    schema, instance = case
    spec = ToolSpec("s", "t", input_schema=schema)
    model = build_tool_model(spec, "t", check=ArgumentValidator)
    by_wire = {p.wire_name: p for p in model.params}
    by_name = {p.name: p for p in model.params}
    extras = {k: v for k, v in instance.items() if k not in by_wire}
    assume(all(by_name[k].wire_name in instance for k in extras if k in by_name))  # see the module docstring
    assert extras == {} or model.kwargs_name is not None, "the schema takes extra keys: so must the function"

    required = [p for p in model.params if p.required]
    positional_count = data.draw(st.integers(0, len(required)), label="positional")
    if any(p.wire_name not in instance or p.name in extras for p in required[:positional_count]):
        # An alternative that does not need this parameter, or its Python name is an extra key (the
        # parameter must then be named by its wire name): pass none positionally.
        positional_count = 0
    args = tuple(instance[p.wire_name] for p in required[:positional_count])
    kwargs: dict[str, Any] = {}
    for param in model.params[positional_count:] if positional_count else model.params:
        if param.wire_name not in instance:
            continue
        by_wire_name = param.name in extras or data.draw(st.booleans(), label=f"{param.name} by wire name")
        kwargs[param.wire_name if by_wire_name else param.name] = instance[param.wire_name]
    kwargs.update(extras)

    arguments = bind_arguments(model, args, kwargs)
    ArgumentValidator(spec).validate(arguments)  # what the hub checks before sending
    assert json.dumps(arguments, sort_keys=True) == json.dumps(instance, sort_keys=True)
