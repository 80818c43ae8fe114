"""What a person sees of code mode in a notebook: HTML, MIME bundles and widgets.

A view turns a record (an ExecutionResult, a call record, an agent's events, the workspace's artifacts)
into something a frontend shows: ``render`` (escaped HTML pieces), ``display`` (the trace MIME bundle of a
finished run, the history listing; a value's text is ``executor.value_text``'s, as every front door reads
it), ``live`` and ``live_bundle`` (the trace of a running cell), ``agent`` (an ``%%agent`` cell's steps and
answer) and ``artifacts`` (the ``artifacts`` object and its browser).

What runs the kernel (magics, the tools in the namespace, the pump between the hub's loop and the main
thread, the history, files for the sidebar) lives in ``codemode_kernel.kernel``, which imports these; a
view never imports the kernel package, so the dependency goes one way (tests/unit/test_views_imports.py).
Importing this package imports none of its modules.
"""
