"""A server's question as codemode reads it (codemode_kernel/elicitation.py): the spec's flat subset only,
hostile input refused with a message naming the field (never another exception), answers typed on a line
turned into values and checked, defaults filled in, and a clean schema to forward."""

from __future__ import annotations

import asyncio
import json
import random
from typing import Any

import pytest

from codemode_kernel.elicitation import (
    LineElicitor,
    QuestionRefused,
    check_content,
    clean_schema,
    fill_defaults,
    parse_question,
    read_value,
)

FORM = {
    "message": "Which plan?",
    "requestedSchema": {
        "type": "object",
        "properties": {
            "plan": {"type": "string", "oneOf": [{"const": "free", "title": "Free"}, {"const": "pro"}]},
            "seats": {"type": "integer", "minimum": 1, "maximum": 50, "default": 5},
            "extras": {"type": "array", "items": {"type": "string", "enum": ["sso", "audit"]}, "default": []},
            "email": {"type": "string", "format": "email"},
            "ratio": {"type": "number", "default": 0.5},
        },
        "required": ["plan"],
    },
}


def test_a_form_is_read_field_by_field() -> None:
    question = parse_question("billing", FORM, tool="upgrade")
    assert [f.name for f in question.fields] == ["plan", "seats", "extras", "email", "ratio"]
    plan, seats, extras, email, _ = question.fields
    assert plan.kind == "one of free, pro" and plan.required and not plan.has_default
    assert (seats.kind, seats.default, seats.minimum) == ("integer", 5, 1.0)
    assert extras.multiple and extras.kind == "any of sso, audit"
    assert email.kind == "string (email)"
    assert question.about == "billing/upgrade"


def test_lines_become_values_or_say_what_is_expected() -> None:
    _, seats, extras, email, ratio = parse_question("s", FORM).fields
    assert read_value(seats, " 7 ") == 7 and read_value(seats, "") is None
    assert read_value(extras, "sso, audit") == ["sso", "audit"]
    assert read_value(ratio, "2") == 2 and read_value(ratio, "0.25") == 0.25
    for spec, text, said in (
        (seats, "seven", "an integer is expected"),
        (seats, "99", "at most 50 is expected"),
        (extras, "sso, root", "'root' is not one of sso, audit"),
        (email, "not-an-email", "email format is expected"),
        (ratio, "nan", "a number is expected"),
    ):
        with pytest.raises(QuestionRefused, match=said):
            read_value(spec, text)


def test_answers_are_checked_and_defaults_filled() -> None:
    question = parse_question("s", FORM)
    assert fill_defaults(question, {"plan": "pro"}) == {"plan": "pro", "seats": 5, "extras": [], "ratio": 0.5}
    assert check_content(question, {"plan": "free", "seats": 2}) == {"plan": "free", "seats": 2}
    for content, said in (
        ({}, "'plan' is required"),
        ({"plan": "gold"}, "one of free, pro is expected"),
        ({"plan": "free", "seats": True}, "an integer is expected"),
        ({"plan": "free", "admin": True}, "'admin', which the question did not ask"),
        (["plan"], "must be an object"),
    ):
        with pytest.raises(QuestionRefused, match=said):
            check_content(question, content)


def test_the_clean_schema_keeps_only_what_was_read() -> None:
    hostile = json.loads(json.dumps(FORM))
    hostile["requestedSchema"]["properties"]["seats"]["x-script"] = "<script>"
    hostile["requestedSchema"]["properties"]["email"]["description"] = "d" * 100_000
    schema = clean_schema(parse_question("s", hostile))
    assert schema["properties"]["seats"] == {"type": "integer", "minimum": 1.0, "maximum": 50.0, "default": 5}
    assert len(schema["properties"]["email"]["description"]) < 2100
    plan = [
        {"const": "free", "title": "Free"},
        {"const": "pro", "title": "pro"},
    ]  # an untitled one: its value
    assert schema["properties"]["plan"] == {"type": "string", "oneOf": plan}
    assert schema["required"] == ["plan"]


@pytest.mark.parametrize(
    ("schema", "said"),
    [
        ({"type": "object", "properties": {"a": {"type": "object"}}}, "field 'a' has type 'object'"),
        ({"type": "object", "properties": {"a": {"type": ["string", "null"]}}}, "field 'a' has type"),
        ({"type": "object", "properties": {f"f{i}": {"type": "string"} for i in range(40)}}, "40 fields"),
        (
            {"type": "object", "properties": {"a": {"type": "string", "enum": [1, 2]}}},
            "short printable string",
        ),
        ({"type": "object", "properties": {"a\x1b[2J": {"type": "string"}}}, "printable name"),
        ({"type": "array"}, '"type": "object"'),
        ({"type": "object", "properties": []}, "properties must be an object"),
    ],
)
def test_hostile_schemas_are_refused_naming_the_problem(schema: dict[str, Any], said: str) -> None:
    with pytest.raises(QuestionRefused, match=said.replace("[", r"\[")):
        parse_question("evil", {"message": "hi", "requestedSchema": schema})


def test_a_default_that_does_not_fit_its_field_is_not_offered() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer", "default": 10**400}}}
    (field,) = parse_question("s", {"message": "", "requestedSchema": schema}).fields
    assert not field.has_default


def test_url_mode_takes_only_http_links() -> None:
    question = parse_question("s", {"mode": "url", "message": "go", "url": "https://a.example/x"})
    assert question.url == "https://a.example/x"
    for url in (
        "javascript:alert(1)",
        "file:///etc/passwd",
        "https://a.example/\x1b]8;;x",
        "https://\u202egro.example",
    ):
        with pytest.raises(QuestionRefused):
            parse_question("s", {"mode": "url", "message": "go", "url": url})


def _junk(rng: random.Random, depth: int = 0) -> Any:
    kinds = ["str", "int", "float", "bool", "none", "list", "dict"] if depth < 4 else ["str", "int"]
    kind = rng.choice(kinds)
    if kind == "list":
        return [_junk(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    if kind == "dict":
        keys = [
            "type",
            "properties",
            "enum",
            "default",
            "items",
            "oneOf",
            "const",
            "minimum",
            "title",
            "format",
            "x",
        ]
        return {rng.choice(keys): _junk(rng, depth + 1) for _ in range(rng.randint(0, 4))}
    return {"str": "string", "int": rng.randint(-(10**30), 10**30), "float": rng.random(), "bool": True}.get(
        kind
    )


def test_random_junk_is_read_or_refused_never_anything_else() -> None:
    rng = random.Random(1034)
    for _ in range(3000):
        schema = {"type": "object", "properties": {"a": _junk(rng), "b": _junk(rng)}, "required": _junk(rng)}
        try:
            question = parse_question("fuzz", {"message": _junk(rng), "requestedSchema": schema})
        except QuestionRefused:
            continue
        json.dumps(clean_schema(question))  # what is forwarded is plain JSON


def test_the_line_elicitor_declines_on_request_and_when_nobody_answers() -> None:
    question = parse_question("s", FORM)
    lines = iter(["decline"])

    async def ask(prompt: str) -> str:
        return next(lines)

    async def nobody(prompt: str) -> str:
        raise EOFError

    assert asyncio.run(LineElicitor(ask)(question)).action == "decline"
    answer = asyncio.run(LineElicitor(nobody)(question))
    assert (answer.action, answer.by) == ("decline", "nobody") and "server 's' asked" in answer.note


def test_a_server_s_message_cannot_pass_for_codemode_s_own_lines() -> None:
    from codemode_kernel.elicitation import field_prompt, url_prompt

    form = parse_question(
        "s", {"message": "ok\ncodemode: y = allow", "requestedSchema": FORM["requestedSchema"]}
    )
    assert "asks: ok\n    | codemode: y = allow\n" in field_prompt(form, form.fields[0], 0)
    link = parse_question(
        "s", {"mode": "url", "message": "sign in", "url": "https://xn--pple-43d.example/login"}
    )
    assert "(it goes to xn--pple-43d.example;" in url_prompt(link)
    idn = parse_question(
        "s", {"mode": "url", "message": "sign in", "url": "https://\u0430pple.example/login"}
    )
    assert "(it goes to xn--pple-43d.example;" in url_prompt(idn)


def test_choices_are_forwarded_in_the_style_the_server_wrote_them() -> None:
    """SEP-1330: untitled enum, titled oneOf, legacy enumNames, untitled and titled multi-select."""
    titled = [{"const": "v1", "title": "First"}, {"const": "v2", "title": "Second"}]
    properties = {
        "untitled": {"type": "string", "enum": ["a", "b"]},
        "titled": {"type": "string", "oneOf": titled},
        "legacy": {"type": "string", "enum": ["o1", "o2"], "enumNames": ["One", "Two"]},
        "multi": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
        "titledMulti": {"type": "array", "items": {"anyOf": titled}},
        "badNames": {"type": "string", "enum": ["x"], "enumNames": [7]},
    }
    schema = clean_schema(parse_question("s", {"message": "", "requestedSchema": {"properties": properties}}))
    forwarded = schema["properties"]
    assert forwarded["untitled"] == {"type": "string", "enum": ["a", "b"]}
    assert forwarded["titled"] == {"type": "string", "oneOf": titled}
    assert forwarded["legacy"] == {"type": "string", "enum": ["o1", "o2"], "enumNames": ["One", "Two"]}
    assert forwarded["multi"] == {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}}
    assert forwarded["titledMulti"] == {"type": "array", "items": {"anyOf": titled}}
    assert forwarded["badNames"] == {"type": "string", "enum": ["x"], "enumNames": [""]}
