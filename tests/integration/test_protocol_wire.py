"""Every message the executor, its zygote and its workers really exchange fits the wire format's types.

The frames are watched where the kernel encodes and decodes them (and the zygote's control packets where
the executor sends and checks them), while real programs run through a real Executor: output, tool calls,
a refused llm() and an answered one, artifact store/get/list and a missing artifact, inputs, an error, a
session's runs. Each message must fit its TypedDict key by key, and each class of the unions must be seen,
so a frame the code sends that the types do not describe fails here.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from codemode_kernel import Toolbox
from codemode_kernel.config import load_config
from codemode_kernel.executor import Executor
from codemode_kernel.worker import protocol
from tests.integration.test_executor import WEATHER
from tests.unit.frame_check import check

pytestmark = pytest.mark.integration

PROGRAM = """
import sys
print("hello", n)
print("careful", file=sys.stderr)
notify("halfway", step=1)
w = get_weather(city="Oslo", unit="celsius")
get_forecast(city="Oslo", days=1, delay_seconds=0, on_progress=print)
store_artifact({"temperature": w.temperature}, name="oslo", description="today")
back = get_artifact("oslo")
listed = list_artifacts()
try:
    get_artifact("nowhere")
except ArtifactNotFoundError:
    pass
try:
    llm("no model yet")
except LLMError:
    pass
[back == {"temperature": w.temperature}, len(listed)]
"""
NEVER_SEEN = {
    protocol.FailedMessage: "sent only for a malformed spawn request, which the executor never makes"
}


def patch_everywhere(monkeypatch: pytest.MonkeyPatch, original: Any, watch: Callable[[Any], None]) -> None:
    """Wrap ``original`` in every loaded module of the package that holds it, calling ``watch`` on messages.

    Encoders are watched on their argument, decoders on their result.
    """
    decoder = original in (protocol.decode_body, protocol.check_zygote_event)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if not decoder:
            watch(args[0])
        result = original(*args, **kwargs)
        if decoder:
            watch(result)
        return result

    patched = 0
    for name, module in list(sys.modules.items()):
        if not name.startswith("codemode_kernel") or module is None:
            continue
        for attribute, value in list(vars(module).items()):
            if value is original:
                monkeypatch.setattr(module, attribute, wrapper)
                patched += 1
    assert patched, f"{original.__name__} is used nowhere"


async def answer(request: dict[str, Any]) -> str:
    return f"answered: {request['prompt']}"


def test_every_message_fits_its_type(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import codemode_kernel.executor.execution
    import codemode_kernel.executor.pool
    import codemode_kernel.executor.requests
    import codemode_kernel.executor.wire
    import codemode_kernel.executor.zygote_client  # noqa: F401  (loaded, so that their names are wrapped)

    to_worker: list[dict[str, Any]] = []
    from_worker: list[dict[str, Any]] = []
    control: list[dict[str, Any]] = []
    patch_everywhere(monkeypatch, protocol.encode_frame, lambda m: to_worker.append(dict(m)))
    patch_everywhere(monkeypatch, protocol.decode_body, from_worker.append)
    patch_everywhere(monkeypatch, protocol.encode_control, lambda m: control.append(dict(m)))
    patch_everywhere(monkeypatch, protocol.check_zygote_event, lambda m: control.append(dict(m)))

    (tmp_path / "codemode.json").write_text(
        json.dumps({"mcpServers": {"weather": WEATHER}, "workspace": str(tmp_path)})
    )
    with Toolbox(load_config(tmp_path / "codemode.json")) as toolbox, Executor(toolbox) as executor:
        first = executor.run(PROGRAM, inputs={"n": 2})
        assert first.status == "ok", first.error
        assert first.value == {"kind": "json", "data": [True, 1]}
        failed = executor.run("1 / 0")
        assert failed.status == "error" and failed.error is not None
        executor.llm = answer
        asked = executor.run('llm("hi", system="be brief")')
        assert asked.value == {"kind": "text", "text": "answered: hi"}
        for code in ("x = 41", "x + 1"):
            assert executor.run(code, session="s").status == "ok"
        assert executor.close_session("s")

    seen: set[type] = set()
    for frame in to_worker:
        seen.add(check(frame, protocol.KernelFrame))
    for frame in from_worker:
        seen.add(check(frame, protocol.WorkerFrame))
    for message in control:
        seen.add(check(message, protocol.ZygoteCommand | protocol.ZygoteEvent))
    every = {*protocol.KERNEL_FRAMES, *protocol.WORKER_FRAMES, *protocol.CONTROL_MESSAGES} - {
        protocol.ZygoteSetup
    }
    assert every - seen == set(NEVER_SEEN), sorted(cls.__name__ for cls in every - seen)
    runs = [frame for frame in to_worker if frame["type"] == "run"]
    assert [run["session"] for run in runs] == [False, False, False, True, True]
    assert runs[0]["inputs"] == {"n": {"kind": "json", "data": 2}}
