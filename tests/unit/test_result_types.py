"""The typed dict forms of records name exactly the fields of the records they are made from.

``ArtifactMetadata`` lives in the worker package (which cannot import the artifact store) and
``ToolCallRecord`` beside ``CallRecord``: a field added to one side and not the other would otherwise go
unnoticed until a program or a view missed it.
"""

from __future__ import annotations

from dataclasses import fields, replace

from codemode_kernel.artifacts import Artifact
from codemode_kernel.calllog import CallRecord, ToolCallRecord
from codemode_kernel.core.records import ArtifactMetadata


def test_artifact_metadata_has_the_fields_of_an_artifact() -> None:
    assert set(ArtifactMetadata.__annotations__) == {f.name for f in fields(Artifact)}
    artifact = Artifact("a1", None, "text/plain", "", 3, "2026-01-01T00:00:00Z", "ab", None)
    assert artifact.to_dict() == {f.name: getattr(artifact, f.name) for f in fields(Artifact)}


def test_a_tool_call_record_has_the_fields_of_a_call_record() -> None:
    assert set(ToolCallRecord.__annotations__) == {f.name for f in fields(CallRecord)}
    record = CallRecord("c1", "weather", "get_weather", {"city": "Oslo"}, 1.0)
    # ``asked`` is left out when the server asked nothing: records stay as saved notebooks hold them.
    assert set(record.to_json()) == set(ToolCallRecord.__annotations__) - {"asked"}
    asked = replace(record, asked=({"kind": "elicitation"},))
    assert set(asked.to_json()) == set(ToolCallRecord.__annotations__)
