"""scripts/bench-report: run the benchmark programs, keep their raw results, draw the charts.

Usage: scripts/bench-report [--quick] [--build-dir DIR] [--out DIR] [--img DIR] [--only NAME...]
                            [--no-run]

Steps, each announced as "[k/N] ...":
  1. the Google Benchmark programs of build/release/microbench (byte_buf_bench, utf8_bench,
     allocator_bench, composite_bench, codec_bench, msgpack_bench, json_bench), each with a
     filter derived from the charts (sections.py), fixed repetitions, interleaved, raw results
     to OUT/<program>.json;
  2. the echo load, `netbuf bench echo --json`, in rounds, to OUT/echo.json;
  3. the MessagePack-RPC client, `netbuf load rpc --json` against `netbuf serve rpc`, callback and
     coroutine styles alternating, in rounds, to OUT/rpc.json;
  4. where Netty 4.1 (libnetty-java) and a JDK are installed, scripts/netty-echo-bench, to
     OUT/netty_echo.json (skipped with one line otherwise, and by --quick unless --only names it);
  5. the charts: IMG/<chart>.svg for every chart whose results this run produced, and
     IMG/summary.svg from every result file in OUT; the figures drawn go to OUT/charts.json.

OUT is build/bench and IMG docs/img; with --quick, build/bench/quick and build/bench/quick/img.
--build-dir DIR takes the programs already built there (building only missing ones); without it
the release preset is configured and built first.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import time

from . import gnuplot, results, sections

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# The full run: interleaved repetitions of a fixed minimum time (medians are drawn); the echo
# matrix in rounds. About 17 minutes on 2 cores shared with builds (min_time counts CPU time, so
# a busy machine stretches the run). --quick: a smoke run of a few rows.
FULL = {"min_time": 0.2, "repetitions": 7, "echo_seconds": 2.0, "echo_rounds": 3,
        "rpc_seconds": 2.0, "rpc_rounds": 3, "netty_seconds": 3}
QUICK = {"min_time": 0.01, "repetitions": 1, "echo_seconds": 0.2, "echo_rounds": 1,
         "rpc_seconds": 0.2, "rpc_rounds": 1, "netty_seconds": 1}

STEPS = sections.PROGRAMS + ["echo", "rpc", "netty"]


class Failure(Exception):
    """A step that failed: the message says which and why."""


def log(msg):
    print(msg, flush=True)


def shown(path):
    """A path as the user would type it: relative when under the current directory."""
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="scripts/bench-report",
        description="Runs netbuf's benchmark programs with fixed repetitions, writes their raw "
        "results as JSON and renders the SVG charts of docs/benchmarks.md (with gnuplot).",
        epilog=f"Full run: {FULL['repetitions']} interleaved repetitions of at least "
        f"{FULL['min_time']:g} s CPU time per row (medians drawn), the echo matrix in "
        f"{FULL['echo_rounds']} rounds of {FULL['echo_seconds']:g} s per row, Netty at "
        f"{FULL['netty_seconds']} s per row. --quick: {QUICK['repetitions']} repetition of "
        f"{QUICK['min_time']:g} s, the first groups of each chart, one echo round of "
        f"{QUICK['echo_seconds']:g} s per row.")
    p.add_argument("--quick", action="store_true",
                   help="smoke run: very short min_time, one repetition, a few rows per program")
    p.add_argument("--build-dir", metavar="DIR",
                   help="use the programs already built in DIR, building only missing ones "
                   "(default: configure and build the release preset, build/release)")
    p.add_argument("--out", metavar="DIR",
                   help="raw results, one JSON file per program (default: build/bench, "
                   "with --quick build/bench/quick)")
    p.add_argument("--img", metavar="DIR",
                   help="where the SVG charts go (default: docs/img, with --quick "
                   "build/bench/quick/img, so that a smoke run leaves the committed charts alone)")
    p.add_argument("--only", metavar="NAME", nargs="+", choices=STEPS,
                   help="run only these (" + ", ".join(STEPS) + ")")
    p.add_argument("--no-run", action="store_true",
                   help="run nothing; render every chart from the result files already in --out")
    return p.parse_args(argv)


def build_programs(args, steps):
    """The build directory, with the programs the steps need built."""
    targets = [s for s in steps if s.endswith("_bench")]
    if "echo" in steps or "rpc" in steps:
        targets.append("netbuf_tool")
    if args.build_dir:
        build = os.path.abspath(args.build_dir)
        if not os.path.exists(os.path.join(build, "CMakeCache.txt")):
            raise Failure(f"{build} is not a configured CMake build directory")
        missing = [t for t in targets if not os.path.exists(program_path(build, t))]
        if missing:
            log(f"building {' '.join(missing)} in {build}")
            run_checked(["cmake", "--build", build, "--target"] + missing)
        return build
    if not targets:
        return os.path.join(REPO, "build", "release")
    log("building the release preset: " + " ".join(targets))
    jobs = str(os.cpu_count() or 2)
    run_checked(["cmake", "--preset", "release"], quiet=True)
    run_checked(["cmake", "--build", "--preset", "release", "-j", jobs, "--target"] + targets,
                quiet=True)
    return os.path.join(REPO, "build", "release")


def program_path(build, target):
    if target == "netbuf_tool":
        return os.path.join(build, "tools", "netbuf")
    return os.path.join(build, "microbench", target)


def run_checked(cmd, quiet=False):
    proc = subprocess.run(cmd, cwd=REPO, capture_output=quiet, text=True)
    if proc.returncode != 0:
        detail = (proc.stdout or "") + (proc.stderr or "") if quiet else ""
        raise Failure(f"{' '.join(cmd)} failed (exit {proc.returncode})\n{detail}")


class Progress:
    """Within a step, "runs done / expected": rewritten in place on a terminal, otherwise one
    line at most every PERIOD seconds."""

    PERIOD = 10.0

    def __init__(self, total):
        self.total = total
        self.tty = sys.stdout.isatty()
        self.start = time.monotonic()
        self.last_line = self.start

    def update(self, done):
        if self.total <= 0:
            return
        elapsed = time.monotonic() - self.start
        if self.tty:
            sys.stdout.write(f"\r      {done}/{self.total} runs, {elapsed:.0f} s")
            sys.stdout.flush()
        elif done < self.total and time.monotonic() - self.last_line >= self.PERIOD:
            log(f"      {done}/{self.total} runs, {elapsed:.0f} s")
            self.last_line = time.monotonic()

    def finish(self):
        if self.tty:
            sys.stdout.write("\r\033[K")
            sys.stdout.flush()
        return time.monotonic() - self.start


def stream(cmd, count_done, expected, log_path):
    """Runs cmd; count_done(stdout so far) says how many of the expected runs are done, for the
    progress line. stdout and stderr go to log_path as well. Returns (stdout, seconds taken).

    Output is read as it comes, not by lines: a program may print its JSON without newlines."""
    progress = Progress(expected)
    out = bytearray()
    with open(log_path, "wb") as log_file:
        log_file.write(("$ " + " ".join(cmd) + "\n").encode())
        log_file.flush()
        proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=log_file)
        done = 0
        while chunk := proc.stdout.read1(65536):
            out += chunk
            log_file.write(chunk)
            now = count_done(out.decode("utf-8", "replace"))
            if now != done:
                done = now
                progress.update(done)
        rc = proc.wait()
    elapsed = progress.finish()
    text = out.decode("utf-8", "replace")
    if rc != 0:
        with open(log_path, encoding="utf-8", errors="replace") as f:
            tail = f.read()[-3000:]
        raise Failure(f"{' '.join(cmd)[:200]} exited with {rc} (log: {log_path})\n{tail}")
    return text, elapsed


def list_benchmarks(program):
    proc = subprocess.run([program, "--benchmark_list_tests=true"], capture_output=True, text=True)
    if proc.returncode != 0:
        raise Failure(f"{program} --benchmark_list_tests failed (exit {proc.returncode})\n"
                      f"{proc.stderr[-2000:]}")
    return set(proc.stdout.split())


def run_program(name, build, out_dir, cfg, quick):
    """One Google Benchmark program, the rows its charts draw, raw results to OUT/<name>.json."""
    program = program_path(build, name)
    wanted = []  # the rows of every chart drawn from this program
    for chart in (c for c in sections.CHARTS if c.source == name):
        wanted += [n for n in sections.benchmark_names(chart, quick) if n not in wanted]
    offered = list_benchmarks(program)
    absent = [n for n in wanted if n not in offered]
    if absent:
        log(f"      note: {name} has no row named {', '.join(absent)} (left out of the chart)")
    names = [n for n in wanted if n in offered]
    if not names:
        raise Failure(f"{name} offers none of the rows its chart draws")
    expected = len(names) * cfg["repetitions"]
    log(f"      {len(names)} rows x {cfg['repetitions']} repetitions, min_time {cfg['min_time']} s")
    out = results.result_path(out_dir, name)
    # Line-buffered through a pipe (coreutils' stdbuf), so that progress follows each run rather
    # than each 4 KiB of console output.
    line_buffered = ["stdbuf", "-oL"] if shutil.which("stdbuf") else []
    cmd = line_buffered + [program, "--benchmark_filter=" + sections.benchmark_filter(names),
           f"--benchmark_min_time={cfg['min_time']}",
           f"--benchmark_repetitions={cfg['repetitions']}",
           "--benchmark_enable_random_interleaving=true",
           "--benchmark_format=console", "--benchmark_color=false",
           "--benchmark_out_format=json", "--benchmark_out=" + out]

    wanted_set = set(names)

    def runs_done(text):
        # Console lines start with the row's name; aggregate lines add a suffix to it.
        return sum(1 for line in text.splitlines()
                   if line.split(" ", 1)[0] in wanted_set)

    _, elapsed = stream(cmd, runs_done, expected, os.path.join(out_dir, name + ".log"))
    results.benchmark_figures(out, chart.metric)  # fails here, not at rendering, if unreadable
    return out, elapsed


def run_echo(build, out_dir, cfg):
    """`netbuf bench echo --json` in rounds: OUT/echo.json holds every round's object."""
    netbuf = program_path(build, "netbuf_tool")
    cmd = [netbuf, "bench", "echo", "--seconds", f"{cfg['echo_seconds']:g}", "--json"]
    rows_per_round = 16  # 8 cases x 2 servers
    rounds = []
    total = 0.0
    log(f"      {cfg['echo_rounds']} round(s) of the 8-case matrix on both servers, "
        f"{cfg['echo_seconds']:g} s per row")
    for k in range(cfg["echo_rounds"]):
        text, elapsed = stream(cmd, lambda out: out.count('"impl"'), rows_per_round,
                               os.path.join(out_dir, f"echo.round{k + 1}.log"))
        total += elapsed
        try:
            doc = json.loads(text)
        except ValueError as e:
            raise Failure(f"netbuf bench echo printed no valid JSON: {e}\n{text[-2000:]}") from e
        if not doc.get("ok", False):
            raise Failure("netbuf bench echo reported errors (\"ok\": false)")
        rounds.append(doc)
        log(f"      round {k + 1}/{cfg['echo_rounds']} done, {elapsed:.0f} s")
    out = results.result_path(out_dir, "echo")
    with open(out, "w", encoding="utf-8") as f:
        json.dump({"command": cmd, "quick": cfg is QUICK, "rounds": rounds}, f, indent=1)
    return out, total


def run_rpc(build, out_dir, cfg):
    """`netbuf load rpc --json` against `netbuf serve rpc` (one server loop), for every case of
    sections.RPC_CASES in both styles, alternating, in rounds: OUT/rpc.json, rows in the echo
    file's shape (impl = the style, size = the payload)."""
    netbuf = program_path(build, "netbuf_tool")
    server = subprocess.Popen([netbuf, "serve", "rpc", "--port", "0", "--threads", "1"], cwd=REPO,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        line = server.stdout.readline()
        if "listening on" not in line:
            raise Failure(f"netbuf serve rpc did not start: {line!r}")
        port = line.strip().rsplit(":", 1)[1]
        cases = [(style, conns, window) for conns, window in sections.RPC_CASES
                 for style in ("callback", "coroutine")]
        total = cfg["rpc_rounds"] * len(cases)
        log(f"      {cfg['rpc_rounds']} round(s) of {len(cases)} runs (method add), "
            f"{cfg['rpc_seconds']:g} s each")
        progress = Progress(total)
        rounds = []
        done = 0
        for _ in range(cfg["rpc_rounds"]):
            rows = []
            for style, conns, window in cases:
                cmd = [netbuf, "load", "rpc", "--port", port, "--method", "add", "--style", style,
                       "--connections", str(conns), "--window", str(window), "--seconds",
                       f"{cfg['rpc_seconds']:g}", "--warmup", "0.2", "--json"]
                proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
                try:
                    row = json.loads(proc.stdout)
                except json.JSONDecodeError as e:
                    raise Failure(f"{' '.join(cmd)} printed no valid JSON: {e}\n"
                                  f"{proc.stdout[-1000:]}{proc.stderr[-1000:]}") from e
                if proc.returncode != 0:
                    raise Failure(f"{' '.join(cmd)} failed: {row.get('first_error', '?')}")
                rows.append({"impl": style, "connections": conns, "size": 0, "window": window,
                             "msgs_per_s": row["calls_per_s"], "p50_us": row["p50_us"],
                             "errors": row["errors"]})
                done += 1
                progress.update(done)
            rounds.append({"results": rows})
        elapsed = progress.finish()
    finally:
        server.send_signal(2)  # SIGINT: the server shuts down gracefully
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
    out = results.result_path(out_dir, "rpc")
    with open(out, "w", encoding="utf-8") as f:
        json.dump({"quick": cfg is QUICK, "rounds": rounds}, f, indent=1)
    return out, elapsed


def netty_installed():
    """Netty 4.1 from Debian and a JDK: what scripts/netty-echo-bench needs without installing."""
    if not shutil.which("javac"):
        return False
    proc = subprocess.run(["dpkg-query", "-W", "-f=${Status}", "libnetty-java"],
                          capture_output=True, text=True)
    return proc.returncode == 0 and "install ok installed" in proc.stdout


def parse_netty_table(text):
    """The rows of scripts/netty-echo-bench's table ("conns size window Netty-msg/s netbuf-msg/s
    ratio | ..."), as echo result rows: one with impl "netty" and one with impl "netbuf" per case."""
    rows = []
    for line in text.splitlines():
        fields = line.split()
        if len(fields) < 5 or not fields[0].isdigit():
            continue
        try:
            conns, size, window = int(fields[0]), int(fields[1]), int(fields[2])
            netty, ours = float(fields[3]), float(fields[4])
        except ValueError:
            continue
        case = {"connections": conns, "size": size, "window": window}
        rows.append(dict(case, impl="netty", msgs_per_s=netty))
        rows.append(dict(case, impl="netbuf", msgs_per_s=ours))
    return rows


def run_netty(out_dir, cfg):
    """scripts/netty-echo-bench: its table rows become OUT/netty_echo.json (impl netty, netbuf)."""
    cmd = [os.path.join(REPO, "scripts", "netty-echo-bench"), str(cfg["netty_seconds"])]
    text, elapsed = stream(cmd, lambda out: len(parse_netty_table(out)) // 2, 8,
                           os.path.join(out_dir, "netty_echo.log"))
    rows = parse_netty_table(text)
    if not rows:
        raise Failure(f"scripts/netty-echo-bench printed no result rows\n{text[-2000:]}")
    out = results.result_path(out_dir, "netty_echo")
    with open(out, "w", encoding="utf-8") as f:
        json.dump({"command": cmd, "quick": cfg is QUICK, "output": text,
                   "rounds": [{"results": rows}]}, f, indent=1)
    return out, elapsed


def render(out_dir, img_dir, charts):
    """Draws the given charts and the summary; returns the SVG paths written. A chart drawn from
    smoke-run results (--quick) says so in its corner."""
    figures = results.Figures(out_dir, sections.CHARTS)
    written = []
    doc = {"charts": {}, "summary": []}
    smoke = "--quick smoke run: not figures to quote"

    def measured(chart):
        return any(figures.has(src) for src in [chart.source] + chart.extra_sources)

    for chart in charts:
        if not measured(chart):
            continue
        table = figures.table(chart)
        labels = []
        for s in chart.series:
            label = s.label
            tiers = {figures.labels.get(chart.source, {}).get(g.rows.get(s.key)) for g in chart.groups}
            tiers.discard(None)
            if s.key == "netbuf" and len(tiers) == 1:
                label += f" ({tiers.pop()})"  # the SIMD tier the run selected
            labels.append((label, s.netbuf))
        path = os.path.join(img_dir, chart.name + ".svg")
        gnuplot.grouped_bars(path, chart.title, chart.ylabel, [g.label for g in chart.groups],
                             labels, table, unit="count" if chart.higher_is_better else "ns",
                             note=smoke if figures.is_smoke(chart) else "medians; " + (
                                 "higher" if chart.higher_is_better else "lower") + " is better")
        written.append(path)
        doc["charts"][chart.name] = {
            "title": chart.title, "unit": chart.ylabel,
            "series": [s.label for s in chart.series],
            "groups": [{"label": g.label.replace("\n", " "),
                        "values": dict(zip([s.key for s in chart.series], row))}
                       for g, row in zip(chart.groups, table)],
        }
    for chart in sections.CHARTS:
        s = measured(chart) and results.summary(chart, figures)
        if s:
            label, ratio, per_group = s
            doc["summary"].append({"chart": chart.name, "label": label.replace("\n", " "),
                                   "speedup": ratio,
                                   "groups": [{"label": g, "speedup": r} for g, r in per_group]})
    if doc["summary"]:
        path = os.path.join(img_dir, "summary.svg")
        gnuplot.ratio_bars(
            path, "netbuf against its main baseline, per section (geometric mean of the workloads)",
            "speed-up (baseline time / netbuf time)", [s["label"].replace(" vs ", "\nvs ")
                                                      for s in doc["summary"]],
            [s["speedup"] for s in doc["summary"]],
            note=smoke if any(figures.is_smoke(c) for c in sections.CHARTS)
            else "above 1x: netbuf is faster (echo: messages per second)")
        written.append(path)
    with open(os.path.join(out_dir, "charts.json"), "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
    return written


def main(argv):
    args = parse_args(argv)
    cfg = QUICK if args.quick else FULL
    default_out = os.path.join(REPO, "build", "bench", *(["quick"] if args.quick else []))
    out_dir = os.path.abspath(args.out or default_out)
    img_dir = os.path.abspath(args.img or (os.path.join(default_out, "img") if args.quick
                                           else os.path.join(REPO, "docs", "img")))
    steps = [] if args.no_run else [s for s in STEPS if not args.only or s in args.only]
    started = time.monotonic()
    try:
        gnuplot.find_gnuplot()  # before anything runs: no results without their charts
        os.makedirs(out_dir, exist_ok=True)
        build = build_programs(args, steps) if steps else None
        total = len(steps) + 1
        ran = set()
        for k, step in enumerate(steps, start=1):
            if step == "netty":
                if args.quick and not (args.only and "netty" in args.only):
                    log(f"[{k}/{total}] netty: skipped by --quick (Netty's JIT warm-up alone "
                        "outlasts a smoke run; name it in --only to run it)")
                    continue
                if not netty_installed():
                    log(f"[{k}/{total}] netty: skipped (libnetty-java or a JDK not installed; "
                        "scripts/netty-echo-bench installs them)")
                    continue
                log(f"[{k}/{total}] netty: scripts/netty-echo-bench {cfg['netty_seconds']}")
                out, elapsed = run_netty(out_dir, cfg)
                ran.add("netty_echo")
            elif step == "echo":
                log(f"[{k}/{total}] echo: netbuf bench echo")
                out, elapsed = run_echo(build, out_dir, cfg)
            elif step == "rpc":
                log(f"[{k}/{total}] rpc: netbuf load rpc against netbuf serve rpc")
                out, elapsed = run_rpc(build, out_dir, cfg)
            else:
                log(f"[{k}/{total}] {step}")
                out, elapsed = run_program(step, build, out_dir, cfg, args.quick)
            ran.add(step)
            log(f"      done in {elapsed:.0f} s: {shown(out)}")
        charts = [c for c in sections.CHARTS
                  if args.no_run or c.source in ran or set(c.extra_sources) & ran]
        log(f"[{total}/{total}] charts into {shown(img_dir)}")
        written = render(out_dir, img_dir, charts)
        for path in written:
            log(f"      {shown(path)} ({os.path.getsize(path)} bytes)")
    except (Failure, gnuplot.RenderError, results.ResultError) as e:
        print(f"bench-report: error: {e}", file=sys.stderr, flush=True)
        return 1
    except KeyboardInterrupt:
        print("bench-report: interrupted", file=sys.stderr)
        return 130
    log(f"bench-report: finished in {time.monotonic() - started:.0f} s")
    return 0
