"""`make bench-metrics`: what the observability costs. The same requests through two gunicorn servers
from requirements.txt's stack, as `make bench` serves them, one with the observability off (the
default) and one with it on (`METRICS_ENABLED=1`, or what `--on` names); runs alternate between
the two so that both see the same machine. Prints, per request, throughput and CPU (gunicorn's
processes, and the PostgreSQL backends) off and on, and their ratios.

    python -m benchmarks.metrics [--duration 5] [--runs 5] [--only me,slots,booking_create]
                                 [--on "METRICS_ENABLED=1 LOG_FORMAT=json"] [--reuse]

The defaults come from the environment too (BENCH_METRICS_DURATION, BENCH_METRICS_RUNS,
BENCH_METRICS_ONLY, BENCH_METRICS_ON, BENCH_METRICS_REUSE), so that a short trial is
`BENCH_METRICS_DURATION=1 BENCH_METRICS_RUNS=1 BENCH_METRICS_ONLY=me make bench-metrics`.
Like `make bench` it wipes and seeds DATABASE_URL (default .../sched_bench; its name must contain
"bench"), unless --reuse measures a database an earlier `make bench` seeded.
"""

import argparse
import os
import shlex
import shutil
import signal
import statistics
import sys
import time
from dataclasses import dataclass, field

from benchmarks.run import CONNECTIONS, Bench, Run, Server, prepare_environment, targets

DEFAULT_ONLY = "me,schedule,slots,booking_create"
# What "off" means: every switch of docs/operations.md, "Observability", at its default.
OFF = {"METRICS_ENABLED": "0", "LOG_FORMAT": "text", "OTEL_TRACES_EXPORTER": "none"}


@dataclass
class Side:
    """One server's runs of one target."""

    runs: list[Run] = field(default_factory=list)

    @property
    def rate(self) -> float:
        return statistics.median(run.rate for run in self.runs)

    @property
    def app_ms(self) -> float:
        """gunicorn's CPU per request, in ms (its master and workers)."""
        return statistics.median(10 * run.app_cpu / run.rate for run in self.runs)

    @property
    def db_ms(self) -> float:
        return statistics.median(10 * run.db_cpu / run.rate for run in self.runs)

    @property
    def errors(self) -> int:
        return sum(run.errors for run in self.runs)


def switches(text: str) -> dict[str, str]:
    """`NAME=value NAME=value` (shell words) as a dict; anything else stops the run."""
    pairs = {}
    for word in shlex.split(text):
        name, equals, value = word.partition("=")
        if not equals or not name.isidentifier():
            sys.exit(f"--on takes NAME=value words (e.g. METRICS_ENABLED=1), not {word!r}")
        pairs[name] = value
    if not pairs:
        sys.exit("--on names nothing to switch on")
    return pairs


def start_server(environment: dict[str, str], name: str, args) -> Server:
    """gunicorn with `environment` over this process's (it inherits os.environ as it starts)."""
    saved = {key: os.environ.get(key) for key in environment}
    os.environ.update(environment)
    try:
        return Server(args.workers, args.worker_class, args.threads, log_name=name, ready_seconds=args.ready_seconds)
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def report(label: str, off: Side, on: Side) -> str:
    throughput = on.rate / off.rate
    app = on.app_ms / off.app_ms
    total = (on.app_ms + on.db_ms) / (off.app_ms + off.db_ms)
    return (
        f"  {label:<28} off {off.rate:7.0f} req/s, {off.app_ms:5.2f} ms app + {off.db_ms:5.2f} ms db CPU | "
        f"on {on.rate:7.0f} req/s, {on.app_ms:5.2f} + {on.db_ms:5.2f} ms | "
        f"on ÷ off: throughput {throughput:.3f}×, app CPU {app:.3f}×, app + db CPU {total:.3f}×"
        f"{f' | errors {off.errors} / {on.errors}' if off.errors or on.errors else ''}"
    )


def main(argv=None) -> None:
    environ = os.environ.get
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=float, default=float(environ("BENCH_METRICS_DURATION", "5")))
    parser.add_argument("--runs", type=int, default=int(environ("BENCH_METRICS_RUNS", "5")))
    parser.add_argument("--only", default=environ("BENCH_METRICS_ONLY", DEFAULT_ONLY))
    parser.add_argument("--on", default=environ("BENCH_METRICS_ON", "METRICS_ENABLED=1"))
    parser.add_argument("--reuse", action="store_true", default=environ("BENCH_METRICS_REUSE", "") == "1")
    # How long a server may take to answer /healthz after it starts (a loaded machine: longer).
    parser.add_argument("--ready-seconds", type=float, default=float(environ("BENCH_METRICS_READY_SECONDS", "30")))
    parser.add_argument("--workers", type=int, default=int(environ("BENCH_WORKERS", "2")))
    parser.add_argument("--worker-class", default=environ("BENCH_WORKER_CLASS", "sync"))
    parser.add_argument("--threads", type=int, default=int(environ("BENCH_THREADS", "1")))
    args = parser.parse_args(argv)
    on_switches = switches(args.on)
    if args.duration <= 0 or args.runs < 1:
        sys.exit("--duration must be above 0 and --runs at least 1")
    if shutil.which("wrk") is None:
        sys.exit("wrk is not installed (Debian: apt-get install wrk); `make bench-metrics` installs it.")

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    started = time.monotonic()
    prepare_environment()
    from django.core.management import call_command

    from benchmarks.seed import purge_broker, seed, seeded_caller

    call_command("migrate", interactive=False, verbosity=0)
    if args.reuse:
        seeded = seeded_caller()
    else:
        print("Seeding the benchmark database…", flush=True)
        seeded = seed()
    purge_broker()
    static, endpoints, extras = targets(seeded)
    by_key = {target.key: target for target in [static, *endpoints, *extras]}
    keys = [key for key in args.only.split(",") if key]
    unknown = [key for key in keys if key not in by_key]
    if unknown or not keys:
        sys.exit(f"--only: unknown {unknown or 'nothing'}; choose among {', '.join(by_key)}")

    servers = {"off": start_server(OFF, "gunicorn-metrics-off", args)}
    try:
        servers["on"] = start_server({**OFF, **on_switches}, "gunicorn-metrics-on", args)
        print(
            f"Two gunicorn servers, {args.workers} {args.worker_class} workers × {args.threads} threads each: "
            f"off ({servers['off'].base_url}) and on with {args.on} ({servers['on'].base_url}); "
            f"wrk -t1 -c{CONNECTIONS}, {args.duration:g} s per run, {args.runs} alternating runs each, medians",
            flush=True,
        )
        benches = {
            side: Bench(server, seeded, seconds=args.duration, runs=args.runs) for side, server in servers.items()
        }
        lines = []
        for key in keys:
            target = by_key[key]
            for bench in benches.values():
                bench.warm(target)
            sides = {"off": Side(), "on": Side()}
            for index in range(args.runs):
                # Alternate which side goes first, so that neither always follows the other.
                order = ("off", "on") if index % 2 == 0 else ("on", "off")
                for side in order:
                    sides[side].runs.append(benches[side].once(target))
            lines.append(report(target.label, sides["off"], sides["on"]))
            print(lines[-1], flush=True)
    finally:
        for server in servers.values():
            server.stop()
        purge_broker()
    print(f"Observability on ({args.on}) vs off, {time.monotonic() - started:.0f} s:", flush=True)
    for line in lines:
        print(line, flush=True)


if __name__ == "__main__":
    main()
