"""The executor's costs: start latency, one tool call, 50 parallel calls, and resources over many runs.

Measured against the embedded weather server (stdio); each timing is a median of many samples, next to a
baseline taken in the same run, in alternating order so machine noise hits both alike:

- start: a trivial execution (``pass``) versus a cold ``python -I -S -c pass``; target <= 0.25x. Each
  sample is a pair: one after an idle pause, as between a model's runs, and one right after it with no
  pause at all (back to back); both halves must meet the target. ``streak`` times a longer run of
  executions in a row, for information: past the workers prepared ahead, each waits for a new one.
- worker: what a prepared worker holds when its program starts (modules loaded, resident memory), read
  by a program; targets under 150 modules and under 25 MB.
- tool_call: one ``get_weather`` call from a program (timed inside it) versus the same call through
  ``hub.call``; target <= 1.1x.
- parallel: 50 concurrent calls of a 200 ms tool versus one call, timed inside the program, with
  ``parallel([...])`` and with ``asyncio.gather`` over ``atools``; target <= 1.5x.
- many_calls: 10,000 calls in one execution; its per-call time, everything included, is
  (t(10,000 calls) - t(trivial execution)) / 10,000.
- runs_in_a_row: 500 executions: open files and processes (of this process and of the pre-started
  worker process) back to where they started, and memory after 500 runs within 10% of after 50.

Prints one JSON object; its "targets" lists every target with what was measured and whether it is met. A
benchmark, not a test: timing never fails CI, so the exit code is 0 whatever the numbers. It is 1 only when
an execution itself fails: the section it belongs to then holds the error, and "failed" lists such sections.

    python bench/executor.py [--quick] [--start-samples 300] [--call-rounds 30] [--runs 500] ... (see --help)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _presets import add_counts, chosen_counts

from codemode_kernel import Toolbox
from codemode_kernel.config import load_config
from codemode_kernel.executor import ExecutionResult, Executor

SERVER = {"command": sys.executable, "args": ["-m", "codemode_kernel.servers.weather"]}
WEATHER_ARGS = {"city": "Seattle", "unit": "celsius"}
SETTLE_SECONDS = 0.5
# Idle time before each start sample, as between a model's runs: the executor prepares the next worker
# while idle, and that work must neither be skipped (back-to-back runs) nor slow the baseline.
IDLE_SECONDS = 0.1
TARGETS = {"start": 0.25, "tool_call": 1.1, "parallel": 1.5, "memory_growth": 1.10}
WORKER_TARGETS = {"modules": 150, "rss_mib": 25.0}  # a prepared worker stays under both
STREAK = 20  # executions in a row for the "streak" figure

# Sample counts: the full run (about 6 minutes on 2 cores) and --quick (well under a minute, for CI).
FULL = {
    "start_samples": 300,
    "call_rounds": 30,
    "calls_per_round": 20,
    "parallel_samples": 300,
    "many_calls": 10_000,
    "runs": 500,
}
QUICK = {
    "start_samples": 40,
    "call_rounds": 5,
    "calls_per_round": 20,
    "parallel_samples": 5,
    "many_calls": 1_000,
    "runs": 100,
}

# The programs measured; their free names (n, weather_args, slow_args, width, ...) are inputs.

# n sequential calls, each timed by the program itself (milliseconds).
CALL_LOOP = """
import time
elapsed = []
for _ in range(n):
    begin = time.perf_counter()
    get_weather(**weather_args)
    elapsed.append((time.perf_counter() - begin) * 1000)
elapsed
"""

# One call, width calls through parallel() and width calls through asyncio.gather, repeats times each.
PARALLEL = """
import asyncio
import time

def threads():
    results = parallel([lambda: get_forecast(**slow_args) for _ in range(width)])
    failed = [r for r in results if isinstance(r, Exception)]
    if failed:
        raise failed[0]

async def gathered():
    await asyncio.gather(*(atools.get_forecast(**slow_args) for _ in range(width)))

ways = {
    "single": lambda: get_forecast(**slow_args),
    "parallel": threads,
    "gather": lambda: asyncio.run(gathered()),
}
elapsed = {name: [] for name in ways}
errors = {}
for repeat in range(repeats):
    names = list(ways) if (offset + repeat) % 2 == 0 else list(reversed(ways))
    for name in (n for n in names if n not in errors):
        begin = time.perf_counter()
        try:
            ways[name]()
        except Exception as exc:
            errors[name] = f"{type(exc).__name__}: {exc}"
        else:
            elapsed[name].append((time.perf_counter() - begin) * 1000)
{"elapsed": elapsed, "errors": errors}
"""

# What a prepared worker holds as a program starts: ``import sys`` loads nothing new, reading /proc neither.
FOOTPRINT = """
import sys
status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines() if ":" in line)
{"modules": len(sys.modules), "rss_kib": int(status["VmRSS"].split()[0]),
 "anon_kib": int(status.get("RssAnon", "0 kB").split()[0])}
"""

# What each of the runs in a row does: one call and some output.
ONE_RUN = 'print(get_weather(city="Seattle", unit="celsius").temperature)'


class ExecutionFailed(RuntimeError):
    """An execution the benchmark relies on did not end ``ok``: its timings would mean nothing."""


# -- helpers ---------------------------------------------------------------------------------------------


def timed_ms(action: Callable[[], object]) -> float:
    """Wall-clock milliseconds ``action`` takes."""
    begin = time.perf_counter()
    action()
    return (time.perf_counter() - begin) * 1000


def checked(result: ExecutionResult) -> ExecutionResult:
    """``result`` when it is ok; otherwise ExecutionFailed with its error."""
    if result.status != "ok":
        raise ExecutionFailed(f"an execution ended {result.status}: {json.dumps(result.error)}")
    return result


def value_of(result: ExecutionResult) -> Any:
    """The JSON data of an ok result's value envelope."""
    envelope = checked(result).value or {}
    return envelope.get("data")


def median(samples: list[float]) -> float:
    """The median, rounded to microseconds (samples are in milliseconds)."""
    return round(statistics.median(samples), 3)


def p90(samples: list[float]) -> float:
    """The 90th percentile, rounded like ``median``."""
    return round(statistics.quantiles(samples, n=10)[-1], 3) if len(samples) > 1 else median(samples)


def compare(value_ms: float, baseline_ms: float, target: float) -> dict[str, Any]:
    """Ratio of two medians, the target and whether it is met."""
    ratio = round(value_ms / baseline_ms, 3)
    return {"ratio": ratio, "target_ratio": target, "meets_target": ratio <= target}


def write_config(folder: Path) -> Path:
    """A config naming only the weather server; the folder is also the workspace (and its .codemode/)."""
    path = folder / "codemode.json"
    path.write_text(json.dumps({"mcpServers": {"weather": SERVER}}))
    return path


# -- resources (Linux /proc; None elsewhere) --------------------------------------------------------------


def open_files(pid: int) -> int | None:
    """How many file descriptors ``pid`` holds."""
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None


def rss_kib(pid: int) -> int | None:
    """Resident memory of ``pid`` in KiB (VmRSS)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return None


def children_of(pids: set[int]) -> dict[int, int]:
    """How many live processes have each of ``pids`` as parent."""
    counts = dict.fromkeys(pids, 0)
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if not entry.isdigit():
            continue
        try:
            status = Path(f"/proc/{entry}/status").read_text()
        except OSError:
            continue  # it exited while we looked
        for line in status.splitlines():
            if line.startswith("PPid:"):
                parent = int(line.split()[1])
                if parent in counts:
                    counts[parent] += 1
                break
    return counts


def zygote_pid(executor: Executor) -> int | None:
    """The pre-started worker process's pid, if this executor version has one we can see."""
    pool = getattr(executor, "_pool", None)
    pid = getattr(pool, "zygote_pid", None)
    return pid if isinstance(pid, int) else None


def snapshot(executor: Executor, runs: int) -> dict[str, Any]:
    """Open files, child processes and memory of this process and of the pre-started worker process.

    Taken after a short pause, so that a worker the executor prepares ahead between runs is counted
    every time, not only when it happened to be ready.
    """
    time.sleep(SETTLE_SECONDS)
    ours, zygote = os.getpid(), zygote_pid(executor)
    children = children_of({ours} | ({zygote} if zygote else set()))
    return {
        "runs": runs,
        "kernel": {"open_files": open_files(ours), "children": children[ours], "rss_kib": rss_kib(ours)},
        "zygote": {
            "pid": zygote,
            "open_files": open_files(zygote) if zygote else None,
            "children": children[zygote] if zygote else None,
            "rss_kib": rss_kib(zygote) if zygote else None,
        },
    }


# -- the measurements -------------------------------------------------------------------------------------


def measure_start(executor: Executor, samples: int) -> dict[str, Any]:
    """(a) Trivial executions versus cold interpreters, in pairs: one after an idle pause, one right after.

    Executions and interpreters alternate which goes first. Both halves of a pair count in the ratio, and
    each half must meet the target on its own.
    """
    cold = [sys.executable, "-I", "-S", "-c", "pass"]
    ways: dict[str, Callable[[], object]] = {
        "execution": lambda: checked(executor.run("pass")),
        "cold_python": lambda: subprocess.run(cold, check=True),
    }
    times: dict[str, dict[str, list[float]]] = {name: {"idle": [], "back_to_back": []} for name in ways}
    for sample in range(samples):
        names = list(ways) if sample % 2 == 0 else list(reversed(ways))
        for name in names:
            time.sleep(IDLE_SECONDS)
            times[name]["idle"].append(timed_ms(ways[name]))
            times[name]["back_to_back"].append(timed_ms(ways[name]))
    streak = [timed_ms(ways["execution"]) for _ in range(STREAK)]
    report: dict[str, Any] = {"samples": samples * 2, "idle_before_each_pair_s": IDLE_SECONDS}
    for half in ("idle", "back_to_back"):
        execution, python = median(times["execution"][half]), median(times["cold_python"][half])
        report[half] = {
            "execution_median_ms": execution,
            "cold_python_median_ms": python,
            "execution_p90_ms": p90(times["execution"][half]),
            **compare(execution, python, TARGETS["start"]),
        }
    everything = {name: times[name]["idle"] + times[name]["back_to_back"] for name in ways}
    execution, python = median(everything["execution"]), median(everything["cold_python"])
    report.update(
        execution_median_ms=execution,
        cold_python_median_ms=python,
        execution_p90_ms=p90(everything["execution"]),
        cold_python_p90_ms=p90(everything["cold_python"]),
        **compare(execution, python, TARGETS["start"]),
    )
    report["meets_target"] = all(report[half]["meets_target"] for half in ("idle", "back_to_back"))
    report["streak"] = {
        "executions_in_a_row": STREAK,
        "median_ms": median(streak),
        "ratio": round(median(streak) / python, 3),
        "note": "no pause at all: past the workers prepared ahead, each run waits for a new one",
    }
    return report


def measure_worker(executor: Executor) -> dict[str, Any]:
    """(a2) A prepared worker's modules and resident memory as its program starts (median of 5 runs)."""
    seen = [value_of(executor.run(FOOTPRINT)) for _ in range(5)]
    modules = int(statistics.median(s["modules"] for s in seen))
    rss_mib = round(statistics.median(s["rss_kib"] for s in seen) / 1024, 1)
    anon_mib = round(statistics.median(s["anon_kib"] for s in seen) / 1024, 1)
    modules_met, rss_met = modules < WORKER_TARGETS["modules"], rss_mib < WORKER_TARGETS["rss_mib"]
    return {
        "modules": modules,
        "rss_mib": rss_mib,
        "anon_mib": anon_mib,
        "modules_under": WORKER_TARGETS["modules"],
        "modules_meets_target": modules_met,
        "rss_mib_under": WORKER_TARGETS["rss_mib"],
        "rss_meets_target": rss_met,
        "meets_target": modules_met and rss_met,
    }


def measure_tool_call(executor: Executor, toolbox: Toolbox, rounds: int, calls: int) -> dict[str, Any]:
    """(b) Calls timed inside a program versus the same calls through ``hub.call``, round by round.

    Timed inside the program because an execution's own duration moves in steps (the worker's exit is
    noticed on a poll), which would swamp the difference between N calls and none.
    """
    inputs = {"weather_args": WEATHER_ARGS, "n": calls}
    in_program: list[float] = []
    hub_direct: list[float] = []
    for round_number in range(rounds):
        for way in ("program", "hub") if round_number % 2 == 0 else ("hub", "program"):
            if way == "program":
                in_program += value_of(executor.run(CALL_LOOP, inputs=inputs, timeout=300))
            else:
                hub_direct += [
                    timed_ms(lambda: toolbox.hub.call("weather", "get_weather", WEATHER_ARGS))
                    for _ in range(calls)
                ]
    worker, hub = median(in_program), median(hub_direct)
    return {
        "samples": rounds * calls,
        "calls_per_execution": calls,
        "in_program_median_ms": worker,
        "hub_direct_median_ms": hub,
        "in_program_p90_ms": p90(in_program),
        "hub_direct_p90_ms": p90(hub_direct),
        **compare(worker, hub, TARGETS["tool_call"]),
    }


def measure_parallel(executor: Executor, samples: int, width: int, seconds: float) -> dict[str, Any]:
    """(c) ``width`` concurrent calls of a ``seconds`` tool versus one call, timed inside the program.

    A way that fails (its error is reported) stops being measured; the others go on.
    """
    slow_args = {"city": "Seattle", "days": 1, "delay_seconds": seconds}
    per_execution = 10  # repeats inside one program: the executions stay well inside their timeout
    times: dict[str, list[float]] = {"single": [], "parallel": [], "gather": []}
    errors: dict[str, str] = {}
    done = 0
    while done < samples:
        repeats = min(per_execution, samples - done)
        inputs = {"slow_args": slow_args, "width": width, "repeats": repeats, "offset": done}
        measured = value_of(executor.run(PARALLEL, inputs=inputs, timeout=300))
        for name, elapsed in measured["elapsed"].items():
            times[name] += elapsed
        errors.update(measured["errors"])
        done += repeats
    if "single" in errors:
        raise ExecutionFailed(f"one call of the slow tool failed: {errors['single']}")
    single = median(times["single"])
    report: dict[str, Any] = {
        "samples": samples,
        "width": width,
        "tool_seconds": seconds,
        "single_median_ms": single,
    }
    for way, prefix in (("parallel", ""), ("gather", "gather_")):
        if way in errors:
            report |= {f"{way}_error": errors[way], f"{prefix}ratio": None, f"{prefix}meets_target": False}
            continue
        report[f"{way}_median_ms"] = median(times[way])
        outcome = compare(median(times[way]), single, TARGETS["parallel"])
        report |= {f"{prefix}ratio": outcome["ratio"], f"{prefix}meets_target": outcome["meets_target"]}
    report["target_ratio"] = TARGETS["parallel"]
    return report


def measure_many_calls(executor: Executor, calls: int) -> dict[str, Any]:
    """(d) ``calls`` tool calls in one execution (the longest timeout there is)."""
    result = checked(executor.run(CALL_LOOP, inputs={"weather_args": WEATHER_ARGS, "n": calls}, timeout=300))
    return {
        "calls": calls,
        "duration_ms": result.duration_ms,
        "tool_calls_in_result": len(result.tool_calls),
    }


def measure_runs_in_a_row(executor: Executor, runs: int) -> dict[str, Any]:
    """(d) ``runs`` executions in a row, with resources at the start, at a tenth and at the end."""
    checkpoint = max(1, runs // 10)
    checked(executor.run(ONE_RUN))  # the zygote exists before the first snapshot
    snapshots = [snapshot(executor, 0)]
    begin = time.perf_counter()
    for run in range(1, runs + 1):
        checked(executor.run(ONE_RUN))
        if run in (checkpoint, runs):
            snapshots.append(snapshot(executor, run))
    elapsed = time.perf_counter() - begin
    start, middle, end = snapshots[0], snapshots[1], snapshots[-1]
    who = ("kernel", "zygote")
    growth = {
        name: round(end[name]["rss_kib"] / middle[name]["rss_kib"], 3) if middle[name]["rss_kib"] else None
        for name in who
    }
    return {
        "runs": runs,
        "checkpoint": checkpoint,
        "per_run_ms": round(elapsed * 1000 / runs, 3),
        "snapshots": snapshots,
        "open_files_back_to_start": all(end[n]["open_files"] == start[n]["open_files"] for n in who),
        "processes_back_to_start": all(end[n]["children"] == start[n]["children"] for n in who),
        "memory_growth": growth,
        "memory_target_growth": TARGETS["memory_growth"],
        "memory_meets_target": all(g is not None and g <= TARGETS["memory_growth"] for g in growth.values()),
    }


def measured(report: dict[str, Any], name: str, measure: Callable[[], dict[str, Any]]) -> None:
    """Put ``measure()`` in the report under ``name``, or the error of the execution that failed it."""
    try:
        report[name] = measure()
    except ExecutionFailed as exc:
        report[name] = {"error": str(exc), "meets_target": False}


def run(options: dict[str, Any]) -> dict[str, Any]:
    """Start a toolbox and an executor in a temporary workspace, measure everything, clean up."""
    report: dict[str, Any] = {
        "benchmark": "executor",
        "machine": {
            "cpu_count": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(terse=True),
        },
        "options": options,
    }
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="codemode-bench-") as folder:
        workspace = Path(folder)
        config = load_config(write_config(workspace), cwd=workspace)
        with (
            Toolbox(config) as toolbox,
            Executor(toolbox, grace=1.0, sandbox=options["sandbox"]) as executor,
        ):
            warm = checked(executor.run(ONE_RUN))  # starts the pre-started worker process
            for _ in range(5):
                checked(executor.run("pass"))
                toolbox.hub.call("weather", "get_weather", WEATHER_ARGS)
            report["protections"] = warm.protections
            measured(report, "start", lambda: measure_start(executor, options["start_samples"]))
            measured(report, "worker", lambda: measure_worker(executor))
            measured(
                report,
                "tool_call",
                lambda: measure_tool_call(
                    executor, toolbox, options["call_rounds"], options["calls_per_round"]
                ),
            )
            measured(
                report,
                "parallel",
                lambda: measure_parallel(
                    executor, options["parallel_samples"], options["parallel_width"], options["tool_seconds"]
                ),
            )
            measured(report, "many_calls", lambda: measure_many_calls(executor, options["many_calls"]))
            measured(report, "runs_in_a_row", lambda: measure_runs_in_a_row(executor, options["runs"]))
    many, start, call = report["many_calls"], report["start"], report["tool_call"]
    if "error" not in many and "error" not in start and "error" not in call:
        # (t(N calls) - t(0 calls)) / N, everything included: the long execution less a trivial one.
        per_call = (many["duration_ms"] - start["execution_median_ms"]) / many["calls"]
        many["per_call_ms"] = round(per_call, 3)
        many["per_call_vs_hub_direct"] = round(per_call / call["hub_direct_median_ms"], 3)
    report["targets"] = targets(report)
    report["meets_all_targets"] = all(target["met"] for target in report["targets"].values())
    report["failed"] = sorted(name for name, section in report.items() if _failed(section))
    report["elapsed_s"] = round(time.perf_counter() - began, 1)
    return report


def targets(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every target in one place: what it is, what this run measured, and whether that meets it.

    A section whose execution failed has measured nothing: its targets are null and not met.
    """
    start, worker, call = report["start"], report["worker"], report["tool_call"]
    parallel, row = report["parallel"], report["runs_in_a_row"]

    def target(measured: Any, limit: Any, met: Any, what: str) -> dict[str, Any]:
        return {"target": limit, "measured": measured, "met": bool(met), "what": what}

    growth = row.get("memory_growth") or {}
    return {
        "start_ratio": target(
            start.get("ratio"), TARGETS["start"], start.get("meets_target"), "<= x a cold Python, both halves"
        ),
        "tool_call_ratio": target(
            call.get("ratio"),
            TARGETS["tool_call"],
            call.get("meets_target"),
            "<= x the same call via hub.call",
        ),
        "worker_modules": target(
            worker.get("modules"), WORKER_TARGETS["modules"], worker.get("modules_meets_target"), "< modules"
        ),
        "worker_rss_mib": target(
            worker.get("rss_mib"), WORKER_TARGETS["rss_mib"], worker.get("rss_meets_target"), "< MiB resident"
        ),
        "parallel_ratio": target(
            parallel.get("ratio"), TARGETS["parallel"], parallel.get("meets_target"), "<= x one call"
        ),
        "memory_growth": target(
            max(growth.values(), default=None, key=lambda g: g or 0),
            TARGETS["memory_growth"],
            row.get("memory_meets_target"),
            "<= x, end of the runs in a row / a tenth of them",
        ),
        "resources_back_to_start": target(
            row.get("open_files_back_to_start") and row.get("processes_back_to_start"),
            True,
            row.get("open_files_back_to_start") and row.get("processes_back_to_start"),
            "open files and processes as at the start",
        ),
    }


def _failed(section: object) -> bool:
    """A section where an execution failed (rather than missed its target)."""
    return isinstance(section, dict) and ("error" in section or any(k.endswith("_error") for k in section))


def main() -> int:
    """Parse the options, run the benchmark and print its JSON report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few samples (a CI smoke run, under a minute)")
    counts = {
        "start_samples": "trivial executions (and cold interpreters)",
        "call_rounds": "rounds of the tool-call comparison (one execution and direct calls each)",
        "calls_per_round": "tool calls per round and way",
        "parallel_samples": "samples of each way in the parallel comparison",
        "many_calls": "calls in the one long execution",
        "runs": "executions in a row (memory is compared at a tenth of them)",
    }
    add_counts(parser, counts, FULL, QUICK)
    parser.add_argument("--parallel-width", type=int, default=50, help="concurrent calls (default 50)")
    parser.add_argument("--tool-seconds", type=float, default=0.2, help="the slow tool's duration (0.2)")
    parser.add_argument(
        "--sandbox",
        type=json.loads,
        default={},
        metavar="JSON",
        help="sandbox policy changes for the executor, e.g. '{\"memory_mb\": 4096}' (default: none)",
    )
    args = parser.parse_args()
    if not isinstance(args.sandbox, dict):
        parser.error("--sandbox must be a JSON object")
    options = chosen_counts(parser, args, counts, FULL, QUICK)
    options.update(parallel_width=args.parallel_width, tool_seconds=args.tool_seconds, sandbox=args.sandbox)
    try:
        report = run(options)
    except ExecutionFailed as exc:  # the warm-up failed: nothing can be measured
        print(f"bench/executor.py: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(report, indent=2))
    return 1 if report["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
