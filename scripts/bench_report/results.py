"""Reading the raw result files of build/bench/ back into the figures the charts draw.

Google Benchmark files (one per program, `--benchmark_out_format=json`) hold every repetition;
the figure of a row is the median over its repetitions. The echo files hold one object per round;
the figure of a case is the median over rounds.
"""

import json
import os
import statistics

_TIME_UNIT_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}


class ResultError(Exception):
    """A result file that exists but cannot be used (not JSON, or not the expected shape)."""


def _load(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise ResultError(f"{path}: {e}") from e


def benchmark_figures(path, metric):
    """{run_name: median figure} of a Google Benchmark JSON file.

    metric "cpu_ns": CPU time per iteration in ns; "ns_per_item": 1e9 / items_per_second.
    Rows that reported an error are left out."""
    doc = _load(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("benchmarks"), list):
        raise ResultError(f"{path}: no 'benchmarks' list (not a Google Benchmark JSON file?)")
    samples = {}
    for b in doc["benchmarks"]:
        if b.get("run_type", "iteration") != "iteration" or b.get("error_occurred"):
            continue
        name = b.get("run_name", b.get("name"))
        if metric == "ns_per_item":
            rate = b.get("items_per_second")
            if not rate:
                continue
            value = 1e9 / rate
        else:
            unit = _TIME_UNIT_NS.get(b.get("time_unit", "ns"))
            if unit is None or "cpu_time" not in b:
                continue
            value = b["cpu_time"] * unit
        samples.setdefault(name, []).append(value)
    return {name: statistics.median(v) for name, v in samples.items()}


def benchmark_labels(path):
    """{run_name: label} for rows that carry a label (utf8_bench names the SIMD tier it ran)."""
    doc = _load(path)
    return {b.get("run_name", b.get("name")): b["label"]
            for b in doc.get("benchmarks", []) if b.get("label")}


def max_repetitions(path):
    """The most repetitions of any row (1: a --quick smoke run)."""
    return max((b.get("repetitions", 1) for b in _load(path).get("benchmarks", [])), default=0)


def echo_figures(path):
    """{(impl, connections, size, window): median msgs/s} of an echo result file.

    echo.json: {"rounds": [<`netbuf bench echo --json` object>, ...]}, each with "results" rows
    {"impl", "connections", "size", "window", "msgs_per_s", ...}.
    netty_echo.json: {"rounds": [{"results": [...]}]} with impl "netty" and "netbuf"."""
    doc = _load(path)
    rounds = doc.get("rounds") if isinstance(doc, dict) else None
    if not isinstance(rounds, list):
        raise ResultError(f"{path}: no 'rounds' list")
    samples = {}
    for r in rounds:
        for row in r.get("results", []):
            try:
                key = (row["impl"], int(row["connections"]), int(row["size"]), int(row["window"]))
                rate = float(row["msgs_per_s"])
            except (KeyError, TypeError, ValueError):
                continue
            if rate > 0 and not row.get("errors") and not row.get("mismatches"):
                samples.setdefault(key, []).append(rate)
    return {k: statistics.median(v) for k, v in samples.items()}


def result_path(out_dir, source):
    return os.path.join(out_dir, f"{source}.json")


class Figures:
    """Every figure of the result files found in one directory, looked up by a group's row."""

    def __init__(self, out_dir, charts):
        self.by_source = {}
        self.labels = {}
        self.smoke = {}
        for chart in charts:
            for source in [chart.source] + list(chart.extra_sources):
                path = result_path(out_dir, source)
                if source in self.by_source or not os.path.exists(path):
                    continue
                if source.endswith("_bench"):
                    self.by_source[source] = benchmark_figures(path, chart.metric)
                    self.labels[source] = benchmark_labels(path)
                    self.smoke[source] = max_repetitions(path) <= 1
                else:
                    self.by_source[source] = echo_figures(path)
                    self.smoke[source] = bool(_load(path).get("quick"))

    def is_smoke(self, chart):
        """Whether any of the chart's figures come from a --quick run."""
        return any(self.smoke.get(src) for src in [chart.source] + list(chart.extra_sources))

    def has(self, source):
        return source in self.by_source

    def value(self, chart, row):
        """The figure of one row: a benchmark name (chart.source's file) or an echo tuple
        (source, impl, connections, size, window). None when it was not measured."""
        if row is None:
            return None
        if isinstance(row, tuple):
            table = self.by_source.get(row[0], {})
            return table.get(tuple(row[1:]))
        return self.by_source.get(chart.source, {}).get(row)

    def table(self, chart):
        """[[value or None per series] per group]: what the chart draws."""
        return [[self.value(chart, g.rows.get(s.key)) for s in chart.series] for g in chart.groups]


def speedup(chart, netbuf, baseline):
    """netbuf against its baseline as a speed-up: above 1 means netbuf is faster."""
    return netbuf / baseline if chart.higher_is_better else baseline / netbuf


def geometric_mean(values):
    return statistics.geometric_mean(values)


def summary(chart, figures):
    """(label, geometric-mean speed-up, [per-group speed-ups]) of the first summary pair with
    figures, or None when the chart has none."""
    keys = [s.key for s in chart.series]
    for netbuf_key, baseline_key, label in chart.summary:
        ratios = []
        for g in chart.groups:
            a = figures.value(chart, g.rows.get(netbuf_key))
            b = figures.value(chart, g.rows.get(baseline_key))
            if a and b:
                ratios.append((g.label.replace("\n", " "), speedup(chart, a, b)))
        if ratios and netbuf_key in keys and baseline_key in keys:
            return label, geometric_mean([r for _, r in ratios]), ratios
    return None
