"""What one execution may do: the paths it writes, the paths it must not see, its limits and environment.

A policy is plain data, built in the kernel from the ``codeMode.sandbox`` settings and sent to the
pre-started process; nothing here touches the system. Defaults are the safe side: no network, writes
only to the workspace and the private temp dir, the usual secret stores under the home hidden.
"""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

__all__ = [
    "ALWAYS_HIDDEN_IN_WORKSPACE",
    "DEFAULT_ENV_ALLOWLIST",
    "DEFAULT_EXTRA_ENV",
    "DEFAULT_HIDDEN_IN_WORKSPACE",
    "SandboxPolicy",
    "default_hidden_paths",
]

HOME_SECRETS = (
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".docker",
    ".kube",
    ".netrc",
    ".git-credentials",
    ".config/git/credentials",
    ".config/gh",
    ".pypirc",
    ".npmrc",
    ".password-store",
    ".local/share/keyrings",
    ".local/share/python_keyring",
    ".config/op",
    ".vault-token",
    ".config/sops",
    ".ray",  # a Ray cluster's auth token (RAY_AUTH_MODE=token): with it, code joins the cluster
    # clouds, registries and the tools that talk to them
    ".config/hub",
    ".config/containers/auth.json",
    ".terraform.d/credentials.tfrc.json",
    ".pulumi/credentials.json",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".gem/credentials",
    ".m2/settings.xml",
    ".m2/settings-security.xml",
    ".yarnrc",
    ".yarnrc.yml",
    ".config/pip",
    ".boto",
    ".s3cfg",
    ".config/rclone",
    ".oci",
    ".config/doctl",
    ".config/hcloud",
    ".fly",
    ".config/ngrok",
    ".ngrok2",
    ".databrickscfg",
    ".kaggle",
    ".config/kaggle",
    ".huggingface/token",
    ".cache/huggingface/token",
    ".cache/huggingface/stored_tokens",
    ".config/github-copilot",
    ".config/configstore",
    # databases
    ".pgpass",
    ".my.cnf",
    ".mylogin.cnf",
    ".dbt/profiles.yml",
    # Jupyter and IPython (the kernel adds where the environment moves them): the runtime directory holds
    # every kernel's connection file (its HMAC key) and the server's token, the data directory the
    # notebook-signing secret, the config the server's token or password, the history every cell typed
    ".local/share/jupyter",
    ".jupyter",
    ".ipython",
    ".config/ipython",
    # browsers: cookies and saved passwords
    ".mozilla",
    ".config/google-chrome",
    ".config/chromium",
    # codemode and other MCP clients (their configs hold API keys in ``env``)
    ".config/codemode",
    ".claude.json",
    ".claude",
    ".cursor",
    ".codeium",
    ".codex",
    ".gemini",
    ".continue",
    ".config/zed",
    ".config/Claude",
    ".config/Code/User",
    ".config/Code - Insiders/User",
    ".config/VSCodium/User",
    ".config/Cursor/User",
    # histories: people paste tokens and type passwords
    ".bash_history",
    ".zsh_history",
    ".local/share/fish/fish_history",
    ".python_history",
    ".psql_history",
    ".mysql_history",
    ".sqlite_history",
    ".node_repl_history",
    ".rediscli_history",
)
"""Under the home: keys, password stores, cloud and registry credentials, database passwords, Jupyter's
and IPython's secrets and history, browser profiles, other MCP clients' configs, codemode's own config and
trust store, and histories. Files rather than whole directories where the directory also holds what
programs use (``~/.cargo`` holds the Rust toolchain, ``~/.cache/huggingface`` the downloaded models)."""

SYSTEM_SOCKETS = (
    "/run/docker.sock",
    "/var/run/docker.sock",
    "/run/containerd",
    "/run/podman",
    "/run/user",
    "/run/dbus",
    "/run/postgresql",
    "/run/mysqld",
    "/tmp/.X11-unix",
    "/tmp/ssh-*",
    "/tmp/ray",
)
"""Unix sockets are file-system objects, so a network namespace does not cut them off, and Landlock
(up to ABI 7) does not govern connecting to them: the container daemons' sockets hand out root on the
host, ``/run/user/<uid>`` holds the session bus and the gpg and ssh agents, databases trust local peers,
an X server gives away keystrokes and screens, ``/tmp/ssh-*`` holds OpenSSH agent sockets, and ``/tmp/ray``
a Ray node's raylet and object store sockets (whoever reaches them runs code on every node of the cluster)."""

ALWAYS_HIDDEN_IN_WORKSPACE = (".codemode",)
"""The artifact store and the kernel's state: the worker reaches artifacts only through the channel."""

DEFAULT_HIDDEN_IN_WORKSPACE = (".env",)
"""Project secrets by convention; a config's ``envFile`` is added to ``hidden`` by the kernel."""

DEFAULT_ENV_ALLOWLIST = (
    "PATH",
    "LANG",
    "LANGUAGE",
    "LC_*",
    "TZ",
    "TERM",
    "USER",
    "LOGNAME",
    "PYTHONHASHSEED",
    "PYTHONIOENCODING",
    "PYTHONUTF8",
    "PYTHONDONTWRITEBYTECODE",
    "NO_COLOR",
)
"""Names kept from the environment (``*`` only as a final wildcard). Nothing that names a secret or a
loader hook (``LD_PRELOAD``, ``PYTHONPATH``): the program was imported already and needs none."""

DEFAULT_EXTRA_ENV = (("OPENBLAS_NUM_THREADS", "1"), ("OMP_NUM_THREADS", "1"), ("MKL_NUM_THREADS", "1"))
"""Thread pools of numeric libraries reserve address space per thread, which RLIMIT_AS counts."""


def default_hidden_paths(home: Path | None = None) -> tuple[Path, ...]:
    """The secret stores under ``home`` (the current user's by default) and the system sockets to hide."""
    base = Path(home) if home is not None else Path(os.path.expanduser("~"))
    return tuple(base / name for name in HOME_SECRETS) + tuple(Path(p) for p in SYSTEM_SOCKETS)


@dataclass(frozen=True)
class SandboxPolicy:
    """The rules for one execution; every path should be absolute (relative ones resolve from the cwd).

    Attributes:
        workspace: the project directory: readable and writable, and the worker's cwd.
        tmp_dir: the private temp dir the runner created for this execution: writable, and what
            ``HOME``, ``TMPDIR``, ``TEMP`` and ``TMP`` point at (so libraries that cache under the home
            work without touching the real one). None keeps ``HOME`` as the allow-list says.
        writable: more directories (or files) the code may change.
        hidden: files and directories the code may neither read nor change: config files and their
            ``envFile``, the trust store, secrets under the home (``default_hidden_paths()``). A ``*``
            in a path is a glob, expanded when the sandbox is entered.
        hidden_in_workspace: names under the workspace hidden as well (``.codemode`` always is).
        read_only: files and directories the code may read but neither change, remove nor move,
            although they lie inside a writable path: what runs outside the sandbox (the scripts a
            server's command names, the host's import path). A missing one cannot be created either.
        network: allow the network (no network namespace, no Landlock TCP rules, sockets allowed).
        memory_mb: RLIMIT_AS, the address space (not resident memory) in MiB; None for no limit.
        cpu_seconds: RLIMIT_CPU in seconds of CPU time (SIGXCPU, then SIGKILL one second later).
        file_size_mb: RLIMIT_FSIZE, the largest file the code may write, in MiB.
        open_files: RLIMIT_NOFILE.
        max_processes: processes and threads at once, the worker included.
        env_allowlist: environment variable names kept (``LC_*`` style wildcards allowed).
        extra_env: variables set in the worker after scrubbing.
        no_new_privs: PR_SET_NO_NEW_PRIVS: setuid binaries gain nothing (needed by Landlock and
            seccomp for an unprivileged process).
    """

    workspace: Path
    tmp_dir: Path | None = None
    writable: tuple[Path, ...] = ()
    hidden: tuple[Path, ...] = field(default_factory=default_hidden_paths)
    hidden_in_workspace: tuple[str, ...] = DEFAULT_HIDDEN_IN_WORKSPACE
    read_only: tuple[Path, ...] = ()
    network: bool = False
    memory_mb: int | None = 1024
    cpu_seconds: int | None = 60
    file_size_mb: int | None = 256
    open_files: int | None = 256
    max_processes: int | None = 64
    env_allowlist: tuple[str, ...] = DEFAULT_ENV_ALLOWLIST
    extra_env: tuple[tuple[str, str], ...] = DEFAULT_EXTRA_ENV
    no_new_privs: bool = True

    def writable_paths(self) -> tuple[Path, ...]:
        """The workspace, the private temp dir and ``writable``, absolute, in that order."""
        paths = [self.workspace, *([self.tmp_dir] if self.tmp_dir is not None else []), *self.writable]
        return tuple(Path(os.path.abspath(p)) for p in paths)

    def hidden_paths(self) -> tuple[Path, ...]:
        """Every hidden path, absolute and with symlinks resolved, without duplicates."""
        workspace = Path(os.path.abspath(self.workspace))
        names = (*ALWAYS_HIDDEN_IN_WORKSPACE, *self.hidden_in_workspace)
        candidates: list[str] = []
        for path in (*self.hidden, *(workspace / name for name in names)):
            text = os.path.abspath(path)
            candidates.extend(sorted(glob.glob(text)) if glob.has_magic(text) else [text])
        seen: dict[Path, None] = {}
        for text in candidates:
            seen.setdefault(Path(os.path.realpath(text)), None)
        return tuple(seen)

    def read_only_paths(self) -> tuple[Path, ...]:
        """Every read-only path, with symlinks resolved, and the directories holding a symlink on the way.

        ``srv/run.sh`` that is a link is kept by its target; the link itself can be replaced by whoever
        may write its directory, so that directory is read-only too when programs may write it (a link
        elsewhere, ``/home`` pointing to another disk, say, is none of their business).
        """
        roots = [os.path.realpath(p) for p in self.writable_paths()]
        seen: dict[Path, None] = {}
        for path in self.read_only:
            text = os.path.abspath(path)
            seen.setdefault(Path(os.path.realpath(text)), None)
            for link in _links_on_the_way(Path(text)):
                holder = os.path.realpath(link.parent)
                if any(holder == root or holder.startswith(root.rstrip(os.sep) + os.sep) for root in roots):
                    seen.setdefault(Path(holder), None)
        return tuple(seen)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, for the trip from the kernel to the zygote (paths as strings, tuples as lists)."""
        data: dict[str, Any] = {}
        for spec in fields(self):
            value = getattr(self, spec.name)
            if isinstance(value, Path):
                value = str(value)
            elif isinstance(value, tuple):
                value = [
                    list(v) if isinstance(v, tuple) else str(v) if isinstance(v, Path) else v for v in value
                ]
            data[spec.name] = value
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SandboxPolicy:
        """The inverse of ``to_dict``; keys left out keep their defaults."""
        paths = {"workspace", "tmp_dir"}
        path_lists = {"writable", "hidden", "read_only"}
        values: dict[str, Any] = {}
        for name, value in data.items():
            if name in paths:
                values[name] = None if value is None else Path(value)
            elif name in path_lists:
                values[name] = tuple(Path(v) for v in value)
            elif name == "extra_env":
                values[name] = tuple((str(k), str(v)) for k, v in value)
            elif isinstance(value, list):
                values[name] = tuple(value)
            else:
                values[name] = value
        return cls(**values)


def _links_on_the_way(path: Path) -> list[Path]:
    """The symbolic links among ``path`` and its ancestors (``path`` absolute)."""
    return [p for p in (path, *path.parents) if os.path.islink(p)]
