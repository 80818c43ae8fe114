"""The isolation layers of a worker: a library the runner calls, each layer testable on its own.

The threat: the program is hostile (a model can be prompt-injected by any tool result). What it may
read, write and reach is written down in docs/threat-model.md; this package enforces it.

How the runner uses it (three processes, each with its own calls)::

    zygote (pre-started, single-threaded, long-lived; started with OPENBLAS_NUM_THREADS=1 and a
            scrubbed environment, before it preloads modules)
        become_child_subreaper()               # orphaned PID 1s come back to it, not to the machine's init
        caps = probe()                         # once, at start; send caps.to_dict() to the kernel
        pid = os.fork()                        # per execution; the zygote reaps every child, orphans too
    warden = the forked child (the pid the zygote and the runner know)
        os.setsid()                            # its own process group, as before
        protections = enter_sandbox(policy, caps, keep_fds=(channel_fd,))
        # never returns here when a PID namespace is available: it waits for PID 1, then exits exactly
        # as PID 1 did (same exit code, or killed by the same signal; SIGXCPU when PID 1 used up its CPU
        # time); it closes every descriptor, so the channel sees end-of-file when PID 1 is gone
    PID 1 of the new namespace (the child enter_sandbox forked; same process group)
        # enter_sandbox returns here, fully confined; every descriptor not in keep_fds is closed
        run the program; report protections.to_dict() with the result
        os._exit(code)                         # PID 1 ending kills every process left in the namespace
    session worker (PID 1 kept across executions)
        kill_namespace()                       # between executions: nothing the last one started survives

Signals: SIGINT to the warden's process group reaches PID 1 as KeyboardInterrupt (PID 1 installs the
handler and unblocks SIGINT, whatever its parent left them as; the warden ignores SIGINT). SIGKILL to the
warden (or its group) kills PID 1 through PR_SET_PDEATHSIG, and with it the whole namespace. SIGTERM or
SIGHUP to the warden SIGKILLs PID 1. A signal sent to PID 1 itself that PID 1 has no handler for is dropped
by the kernel (only SIGKILL from outside always works): signal the warden or its group.

Without a PID namespace, ``enter_sandbox`` confines the calling process itself and returns in it; the
runner's process-group kill is then all that ends the program's children.

``plan(policy, caps)`` gives the same ``Protections`` without changing anything (for tests); what users
see, in results and in ``codemode doctor``, is what a worker reported after entering. ``SandboxError`` means
a layer the plan promised failed: report the execution as ``internal`` and do not run the program.
"""

from ._capabilities import Capabilities, probe
from ._enter import enter_sandbox
from ._errors import SandboxError
from ._namespaces import become_child_subreaper, fork_into_new_pid_namespace, kill_namespace, supervise
from ._plan import Protections, plan
from ._policy import ALWAYS_HIDDEN_IN_WORKSPACE, DEFAULT_ENV_ALLOWLIST, SandboxPolicy, default_hidden_paths

__all__ = [
    "ALWAYS_HIDDEN_IN_WORKSPACE",
    "DEFAULT_ENV_ALLOWLIST",
    "Capabilities",
    "Protections",
    "SandboxError",
    "SandboxPolicy",
    "become_child_subreaper",
    "default_hidden_paths",
    "enter_sandbox",
    "fork_into_new_pid_namespace",
    "kill_namespace",
    "plan",
    "probe",
    "supervise",
]
