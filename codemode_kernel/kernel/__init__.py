"""The Code Mode Jupyter kernel, its magics, kernelspec installer and ``codemode lab``.

Importing this package does not import ipykernel; ``%load_ext codemode_kernel`` attaches the same tools and
magics to any IPython shell.
"""
