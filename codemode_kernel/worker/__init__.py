"""The worker side of the process boundary: what runs in the sandboxed worker process.

``zygote`` is the pre-started process (its ``main()``, started by the executor): it imports this
package once, builds the ``tools`` module (``tools_module``) and forks a worker per run, which enters the
sandbox (``sandbox``) and runs one program (``main``, ``source``, ``values``), talking to the kernel over
its channel (``channel``, ``protocol``).

Everything here imports only the standard library, ``codemode_kernel.core`` and ``codemode_kernel.typegen``
(both standard library only), also inside functions: a prepared worker must not carry the MCP SDK,
pydantic, jsonschema or the hub. One exception: ``llm_json(schema=...)`` imports jsonschema when a program
calls it, since a schema the program wrote is checked in the sandbox. ``lint-imports`` checks the rule
(the contracts in pyproject.toml). The
kernel's side of the boundary is ``codemode_kernel.executor`` (docs/architecture.md).
"""
