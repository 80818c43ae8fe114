"""Scale-out: what the Ray backend costs against the local one, and short programs on 1, 2 and 3 nodes.

A real Ray cluster on this machine (``ray.cluster_utils.Cluster``: real GCS and raylet processes, each node
offering one CPU), the embedded weather server over stdio, and two Executors on the same Toolbox: the local
backend and the Ray one. Every Ray figure has the local one beside it, measured in the same run:

- first_run_ms: each backend's first run (the warm-up); on Ray it connects to the cluster and starts the
  node's actor.
- start: the time to the result of a trivial program (``pass``), median over ``--start-samples`` runs of
  each backend in alternating order; on Ray each run reserves ``cpus=0.1``, so the node has room for it
  while the run before gives its reservation back.
- start_full_node: the same, each Ray run reserving ``cpus=1`` on the one-CPU node: every run needs the
  CPU the run before just gave back. Ray's GCS retries a placement group that did not fit on a one-second
  tick, so this is what a run queued behind another pays.
- per_call: a program making ``--calls`` (50) sequential ``get_weather`` calls, each timed inside it, on
  each backend in alternating rounds: the median call, and the ratio Ray / local. On Ray every call
  crosses the relay (kernel -> node actor -> worker and back) instead of a local socket.
- throughput: short programs submitted from ``--concurrency`` (32) threads at once, with the cluster at 1,
  2 and 3 nodes (the head, then a node added, then another), each kind on Ray and on the local backend:
  - cpu: ``--cpu-programs`` (30) programs that each burn ``--burn`` (0.2) s of CPU and reserve
    ``cpus=1``, so a node runs one at a time. This machine has 2 cores, which bound what any backend can
    do here. ``core_time_beyond_program_ms`` is usable cores x wall / programs - the program's own CPU:
    the time per program a usable core did not spend running a program (placement, starting and ending
    workers, waiting for Ray's tick), the scheduler's own overhead stated plainly.
  - tool: ``--programs`` (100) programs that each wait on a 200 ms tool (the weather server's
    ``get_forecast`` with ``delay_seconds``) and reserve ``cpus=0.1``, so Ray packs up to 10 on a node.
    ``peak_running`` and ``mean_running`` (from the programs' own start and end times) show how many ran
    at once.

The cluster grows by one node at a time rather than being started anew for each size: the same 1-, 2-
and 3-node clusters, without paying a cluster start three times on a small machine. After each node is
added, a warm-up spreads one run to every node, so no timed run pays for starting a node's actor.

Prints one JSON object; "targets" lists what the issue claims (packing on a node, throughput growing with
nodes) with what was measured. A benchmark, not a test: timing never fails CI, so the exit code is 0
whatever the numbers. It is 1 only when an execution fails (its section holds the error), 2 without Ray.

    python bench/scale.py [--quick] [--programs 100] [--concurrency 32] ... (see --help)
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from _presets import add_counts, chosen_counts

from codemode_kernel import Toolbox
from codemode_kernel.config import load_config
from codemode_kernel.config.models import ExecutorResources, ExecutorSettings
from codemode_kernel.executor import ExecutionResult, Executor

SERVER = {"command": sys.executable, "args": ["-m", "codemode_kernel.servers.weather"]}
WEATHER_ARGS = {"city": "Seattle", "unit": "celsius"}
NODE_ARGS: dict[str, Any] = {
    "num_cpus": 1,
    "object_store_memory": 80 << 20,
    "include_log_monitor": False,
    "include_dashboard": False,  # nothing here needs it, and its fixed port may be another cluster's
}
RUN_TIMEOUT = 120.0  # seconds per run: a run queued behind 31 others on one node waits its turn
CPU_BOUND = ExecutorResources(cpus=1)
"""A CPU-bound program reserves a whole CPU: one at a time per node (each node offers one)."""
TOOL_BOUND = ExecutorResources(cpus=0.1)
"""A program that mostly waits on a tool reserves a tenth: Ray packs up to ten on a node."""
ROOMY = TOOL_BOUND
"""For the start and per-call figures: the node has room for the next run while the last one ends."""

# Sample counts: the full run (about 3 minutes on 2 cores) and --quick (about a minute).
FULL = {"start_samples": 20, "call_rounds": 6, "programs": 100, "cpu_programs": 30}
QUICK = {"start_samples": 5, "call_rounds": 2, "programs": 30, "cpu_programs": 10}

# The programs measured; their free names (n, burn, forecast_args, ...) are inputs.

CALL_LOOP = """
import time
elapsed = []
for _ in range(n):
    begin = time.perf_counter()
    get_weather(**weather_args)
    elapsed.append((time.perf_counter() - begin) * 1000)
elapsed
"""

# Burns ``burn`` seconds of this process's CPU, in small steps so it ends close to that.
CPU_PROGRAM = """
import time
began, cpu = time.time(), time.process_time()
total = 0
while time.process_time() - cpu < burn:
    for i in range(2000):
        total += i * i
{"began": began, "ended": time.time(), "cpu": time.process_time() - cpu}
"""

TOOL_PROGRAM = """
import time
began = time.time()
get_forecast(**forecast_args)
{"began": began, "ended": time.time()}
"""

SPREAD_PROGRAM = "import time\ntime.sleep(0.5)"


class ExecutionFailed(RuntimeError):
    """An execution the benchmark relies on did not end ``ok``: its timings would mean nothing."""


# -- helpers ---------------------------------------------------------------------------------------------


def checked(result: ExecutionResult) -> ExecutionResult:
    """``result`` when it is ok; otherwise ExecutionFailed with its error."""
    if result.status != "ok":
        raise ExecutionFailed(f"an execution ended {result.status}: {json.dumps(result.error)}")
    return result


def value_of(result: ExecutionResult) -> Any:
    """The JSON data of an ok result's value envelope."""
    envelope = checked(result).value
    return envelope.get("data") if envelope else None


def trivial_ms(executor: Executor, resources: ExecutorResources) -> float:
    """Wall-clock milliseconds from asking for a trivial program to its (ok) result."""
    begin = time.perf_counter()
    checked(executor.run("pass", timeout=RUN_TIMEOUT, resources=resources))
    return (time.perf_counter() - begin) * 1000


def median(samples: list[float]) -> float:
    """The median, rounded to microseconds (samples are in milliseconds)."""
    return round(statistics.median(samples), 3)


def p90(samples: list[float]) -> float:
    """The 90th percentile, rounded like ``median``."""
    return round(statistics.quantiles(samples, n=10)[-1], 3) if len(samples) > 1 else median(samples)


def in_turn(round_number: int) -> tuple[str, str]:
    """The order of the two backends in a round: alternating, so machine noise hits both alike."""
    return ("local", "ray") if round_number % 2 == 0 else ("ray", "local")


# -- the cluster -----------------------------------------------------------------------------------------


@contextlib.contextmanager
def ray_cluster() -> Iterator[Any]:
    """A one-node Ray cluster on this machine (the head); ``add_node`` grows it. Shut down on leaving."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    import ray
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args=dict(NODE_ARGS, no_monitor=True))
    try:
        yield cluster
    finally:
        ray.shutdown()
        cluster.shutdown()  # type: ignore[no-untyped-call]


def add_node(cluster: Any) -> None:
    """One more node with one CPU, alive before this returns."""
    cluster.add_node(**NODE_ARGS)
    cluster.wait_for_nodes()


def spread(executor: Executor, nodes: int) -> int:
    """Runs that each hold a whole CPU for a moment, ``nodes`` at once, until every node has run one.

    A node's first run starts its actor (a new Python process); this keeps that out of the timings.
    Returns how many nodes ran one (``nodes`` unless Ray kept placing on the same ones).
    """
    seen: set[str] = set()
    for _ in range(4):
        with ThreadPoolExecutor(nodes) as pool:
            results = list(pool.map(lambda _: _run_spread(executor), range(nodes)))
        seen.update(r.nodes[-1]["node"] for r in results if r.nodes)
        if len(seen) >= nodes:
            break
    return len(seen)


def _run_spread(executor: Executor) -> ExecutionResult:
    return checked(executor.run(SPREAD_PROGRAM, timeout=RUN_TIMEOUT, resources=CPU_BOUND))


# -- start and per-call overhead ---------------------------------------------------------------------------


def measure_start(
    executors: dict[str, Executor], samples: int, resources: ExecutorResources
) -> dict[str, Any]:
    """A trivial program's time to its result on each backend, alternating; Ray / local."""
    times: dict[str, list[float]] = {name: [] for name in executors}
    for sample in range(samples):
        for name in in_turn(sample):
            times[name].append(trivial_ms(executors[name], resources))
    return {"samples": samples, "ray_reserves_cpus": resources.cpus, **versus(times)}


def versus(times: dict[str, list[float]]) -> dict[str, Any]:
    """Medians and 90th percentiles of both backends' samples, their ratio and their difference."""
    local, ray = median(times["local"]), median(times["ray"])
    return {
        "local_median_ms": local,
        "ray_median_ms": ray,
        "local_p90_ms": p90(times["local"]),
        "ray_p90_ms": p90(times["ray"]),
        "ratio": round(ray / local, 2),
        "ray_minus_local_ms": round(ray - local, 3),
    }


def measure_per_call(executors: dict[str, Executor], rounds: int, calls: int) -> dict[str, Any]:
    """Calls timed inside a program on each backend, round by round in alternating order; Ray / local."""
    inputs = {"weather_args": WEATHER_ARGS, "n": calls}
    times: dict[str, list[float]] = {name: [] for name in executors}
    for round_number in range(rounds):
        for name in in_turn(round_number):
            result = executors[name].run(CALL_LOOP, inputs=inputs, timeout=RUN_TIMEOUT, resources=ROOMY)
            times[name] += value_of(result)
    return {"samples": rounds * calls, "calls_per_program": calls, **versus(times)}


# -- throughput ----------------------------------------------------------------------------------------


def batch(
    executor: Executor,
    program: str,
    inputs: dict[str, Any],
    count: int,
    concurrency: int,
    resources: ExecutorResources,
) -> tuple[list[ExecutionResult], float]:
    """``count`` runs of ``program`` from ``concurrency`` threads at once; the results and the wall time."""

    def one(_: int) -> ExecutionResult:
        return executor.run(program, inputs=inputs, timeout=RUN_TIMEOUT, resources=resources)

    began = time.perf_counter()
    with ThreadPoolExecutor(concurrency) as pool:
        results = list(pool.map(one, range(count)))
    return results, time.perf_counter() - began


def running_at_once(spans: list[tuple[float, float]]) -> int:
    """The most intervals that overlap at one instant."""
    events = sorted([(begin, 1) for begin, _ in spans] + [(end, -1) for _, end in spans])
    peak = current = 0
    for _, step in events:
        current += step
        peak = max(peak, current)
    return peak


def summarize(results: list[ExecutionResult], wall: float, usable_cores: int | None) -> dict[str, Any]:
    """Throughput, latency, how many ran at once and, for CPU-bound runs, the cost beyond the programs."""
    failed = [r for r in results if r.status != "ok"]
    if failed:
        raise ExecutionFailed(
            f"{len(failed)} of {len(results)} executions failed; the first ended {failed[0].status}: "
            f"{json.dumps(failed[0].error)}"
        )
    seen = [value_of(r) for r in results]
    spans = [(s["began"], s["ended"]) for s in seen]
    inside = [(end - begin) * 1000 for begin, end in spans]
    report: dict[str, Any] = {
        "programs": len(results),
        "wall_s": round(wall, 3),
        "programs_per_s": round(len(results) / wall, 2),
        "run_median_ms": median([r.duration_ms for r in results]),
        "run_p90_ms": p90([r.duration_ms for r in results]),
        "program_median_ms": median(inside),
        "peak_running": running_at_once(spans),
        "mean_running": round(sum(inside) / 1000 / wall, 2),
    }
    if usable_cores is not None:
        cpu_ms = median([s["cpu"] * 1000 for s in seen])
        per_program = usable_cores * wall * 1000 / len(results)
        report |= {
            "usable_cores": usable_cores,
            "program_cpu_median_ms": cpu_ms,
            "core_time_beyond_program_ms": round(per_program - cpu_ms, 1),
        }
    nodes: dict[str, int] = {}
    for result in results:
        if result.nodes:
            node = result.nodes[-1]["node"][:12]
            nodes[node] = nodes.get(node, 0) + 1
    if nodes:
        report["programs_per_node"] = dict(sorted(nodes.items()))
    return report


def measure_kind(
    executors: dict[str, Executor], kind: str, nodes: int, options: dict[str, Any]
) -> dict[str, Any]:
    """One kind of program (cpu or tool) on both backends, local first, then Ray on ``nodes`` nodes."""
    cores = os.cpu_count() or 1
    if kind == "cpu":
        program, inputs, resources = CPU_PROGRAM, {"burn": options["burn"]}, CPU_BOUND
        slots = {"local": min(cores, options["concurrency"]), "ray": min(cores, nodes)}
    else:
        forecast = {"city": "Seattle", "days": 1, "delay_seconds": options["tool_seconds"]}
        program, inputs, resources, slots = TOOL_PROGRAM, {"forecast_args": forecast}, TOOL_BOUND, {}
    report: dict[str, Any] = {}
    count = options["cpu_programs" if kind == "cpu" else "programs"]
    for name in ("local", "ray"):
        results, wall = batch(executors[name], program, inputs, count, options["concurrency"], resources)
        report[name] = summarize(results, wall, slots.get(name))
    report["ray_vs_local_throughput"] = round(
        report["ray"]["programs_per_s"] / report["local"]["programs_per_s"], 2
    )
    return report


def measure_throughput(
    cluster: Any, executors: dict[str, Executor], options: dict[str, Any]
) -> dict[str, Any]:
    """Both kinds at 1, 2 and 3 nodes; the cluster grows between sizes."""
    report: dict[str, Any] = {}
    for nodes in (1, 2, 3):
        if nodes > 1:
            add_node(cluster)
        warmed = spread(executors["ray"], nodes)
        size: dict[str, Any] = {"nodes": nodes, "nodes_warmed": warmed}
        for kind in ("cpu", "tool"):
            try:
                size[kind] = measure_kind(executors, kind, nodes, options)
            except ExecutionFailed as exc:
                size[kind] = {"error": str(exc)}
        report[f"{nodes}_nodes"] = size
    return report


# -- the run -------------------------------------------------------------------------------------------


def first_run(executors: dict[str, Executor]) -> dict[str, float]:
    """Each backend's first run (warm-up): on Ray it connects to the cluster and starts the node's actor."""
    first = {name: round(trivial_ms(executor, ROOMY), 1) for name, executor in executors.items()}
    for executor in executors.values():
        for _ in range(3):
            trivial_ms(executor, ROOMY)
    return first


def run(options: dict[str, Any]) -> dict[str, Any]:
    """Start the cluster, a toolbox and both executors in a temporary workspace, measure, clean up."""
    import ray

    report: dict[str, Any] = {
        "benchmark": "scale",
        "date": datetime.date.today().isoformat(),
        "machine": {
            "cpu_count": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(terse=True),
            "ray": ray.__version__,
        },
        "options": options,
    }
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="codemode-bench-") as folder, ray_cluster() as cluster:
        workspace = Path(folder)
        (workspace / "codemode.json").write_text(json.dumps({"mcpServers": {"weather": SERVER}}))
        cluster_s = round(time.perf_counter() - began, 1)
        on_ray = ExecutorSettings(backend="ray", address=cluster.address)
        with (
            Toolbox(load_config(workspace / "codemode.json", cwd=workspace)) as toolbox,
            Executor(toolbox, grace=1.0, executor=ExecutorSettings()) as local,
            Executor(toolbox, grace=1.0, executor=on_ray) as on_cluster,
        ):
            executors = {"local": local, "ray": on_cluster}
            first = first_run(executors)
            report["cluster_start_s"] = cluster_s
            report["first_run_ms"] = first
            samples = options["start_samples"]
            report["start"] = measured(lambda: measure_start(executors, samples, ROOMY))
            report["start_full_node"] = measured(lambda: measure_start(executors, samples, CPU_BOUND))
            report["per_call"] = measured(
                lambda: measure_per_call(executors, options["call_rounds"], options["calls"])
            )
            report["throughput"] = measure_throughput(cluster, executors, options)
    report["targets"] = targets(report)
    report["failed"] = failures(report)
    report["elapsed_s"] = round(time.perf_counter() - began, 1)
    return report


def measured(measure: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """``measure()``, or the error of the execution that failed it."""
    try:
        return measure()
    except ExecutionFailed as exc:
        return {"error": str(exc)}


def targets(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """What the issue says the Ray backend does here, each with what this run measured.

    - tool_packs_on_a_node: on one node, tool-bound programs (cpus=0.1) run several at once.
    - tool_scales_with_nodes: tool-bound throughput on 3 nodes is at least 1.5x that on 1.
    - cpu_scales_to_the_cores: CPU-bound throughput on 2 nodes is at least 1.5x that on 1 (a node runs one
      at a time; two cores bound it past 2 nodes).
    """
    sizes = report["throughput"]

    def figure(nodes: int, kind: str, field: str) -> Any:
        return sizes[f"{nodes}_nodes"].get(kind, {}).get("ray", {}).get(field)

    def ratio(kind: str, more: int) -> float | None:
        high, low = figure(more, kind, "programs_per_s"), figure(1, kind, "programs_per_s")
        return round(high / low, 2) if high and low else None

    peak = figure(1, "tool", "peak_running")
    tool, cpu = ratio("tool", 3), ratio("cpu", 2)
    return {
        "tool_packs_on_a_node": {"target": "> 1", "measured": peak, "met": bool(peak and peak > 1)},
        "tool_scales_with_nodes": {"target": 1.5, "measured": tool, "met": bool(tool and tool >= 1.5)},
        "cpu_scales_to_the_cores": {"target": 1.5, "measured": cpu, "met": bool(cpu and cpu >= 1.5)},
    }


def failures(report: dict[str, Any]) -> list[str]:
    """The sections where an execution failed (rather than a target missed)."""
    failed = [name for name in ("start", "start_full_node", "per_call") if "error" in report[name]]
    for size, section in report["throughput"].items():
        failed += [f"throughput.{size}.{kind}" for kind in ("cpu", "tool") if "error" in section[kind]]
    return failed


def main() -> int:
    """Parse the options, run the benchmark and print its JSON report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer samples and programs (about a minute)")
    counts = {
        "start_samples": "trivial programs per backend for the start figure",
        "call_rounds": "programs per backend making the sequential calls",
        "programs": "tool-bound programs per batch",
        "cpu_programs": "CPU-bound programs per batch (each reserves a whole CPU)",
    }
    add_counts(parser, counts, FULL, QUICK)
    parser.add_argument("--calls", type=int, default=50, help="sequential calls in one program (50)")
    parser.add_argument("--concurrency", type=int, default=32, help="runs submitted at once (32)")
    parser.add_argument("--burn", type=float, default=0.2, help="CPU seconds a CPU-bound program burns (0.2)")
    parser.add_argument("--tool-seconds", type=float, default=0.2, help="the slow tool's duration (0.2)")
    args = parser.parse_args()
    options = chosen_counts(parser, args, counts, FULL, QUICK)
    options.update(
        calls=args.calls, concurrency=args.concurrency, burn=args.burn, tool_seconds=args.tool_seconds
    )
    for name in (*counts, "calls", "concurrency"):
        if options[name] < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    try:
        import ray  # noqa: F401
    except ImportError:
        print('bench/scale.py needs Ray: pip install "codemode-kernel[ray]"', file=sys.stderr)
        return 2
    try:
        report = run(options)
    except ExecutionFailed as exc:  # a warm-up failed: nothing can be measured
        print(f"bench/scale.py: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(report, indent=2))
    return 1 if report["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
