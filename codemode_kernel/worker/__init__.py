"""The worker side of the process boundary: what runs in the sandboxed worker process.

``zygote`` is the pre-started process (its ``main()``, started by the executor): it imports this
package once, builds the ``tools`` module (``tools_module``) and forks a worker per run, which enters the
sandbox (``sandbox``) and runs one program (``main``, ``source``, ``values``), talking to the kernel over
its channel (``channel``, ``protocol``).

Everything here imports only the standard library and the kernel's small stdlib-only pieces (errors,
results, toolspec, typegen): a prepared worker must not carry the MCP SDK, pydantic or the hub. The
kernel's side of the boundary is ``codemode_kernel.executor`` (docs/architecture.md).
"""
