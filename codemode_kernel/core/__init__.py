"""The shared core: what the kernel and a worker both import, standard library only.

``errors`` (the one error tree), ``limits`` (execution time limits), ``toolspec`` (a tool's spec),
``results`` (a tool result as Python values) and ``progress`` (a call's progress in a program). A worker
imports these and nothing from the kernel side; ``lint-imports`` checks the rule (pyproject.toml).
"""
