"""The package's version, stated once.

pyproject.toml reads it (hatch's dynamic version), ``codemode_kernel.__version__`` re-exports it, and the
kernel reports it as its ``implementation_version``. Plain text with no imports, so a worker or a build tool
can read it without loading anything else.
"""

__all__ = ["__version__"]

__version__ = "0.1.0"
