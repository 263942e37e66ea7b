"""Tests of scripts/bench-report against a build tree's benchmark programs.

Usage: bench_report_test.py --source-dir DIR --build-dir DIR
"""

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"
ARGS = None


def bench_report(*args, env=None):
    script = os.path.join(ARGS.source_dir, "scripts", "bench-report")
    return subprocess.run([sys.executable, script] + list(args), capture_output=True, text=True,
                          env=env, timeout=150)


def check_svg(test, path, expected_texts):
    """path is a well-formed SVG with bars and these labels, and no rasters or fonts inside."""
    test.assertTrue(os.path.exists(path), f"{path} was not written")
    root = ET.parse(path).getroot()  # raises on malformed XML
    test.assertEqual(root.tag, SVG + "svg")
    test.assertTrue(float(root.get("width", "0")) > 0 and float(root.get("height", "0")) > 0)
    test.assertGreater(len(root.findall(f".//{SVG}path")), 10, f"{path}: no bars drawn")
    texts = " ".join("".join(t.itertext()) for t in root.iter(SVG + "text"))
    for expected in expected_texts:
        test.assertIn(expected, texts, f"{path}: no label '{expected}'")
    test.assertEqual(root.findall(f".//{SVG}image"), [], f"{path} embeds a raster image")
    test.assertEqual(root.findall(f".//{SVG}font"), [], f"{path} embeds a font")
    with open(path, encoding="utf-8") as f:
        test.assertNotIn("@font-face", f.read())


class QuickRun(unittest.TestCase):
    """--quick --only utf8_bench: the smoke run the issue asks for, on the real program."""

    @classmethod
    def setUpClass(cls):
        if not shutil.which("gnuplot") and not os.environ.get("NETBUF_GNUPLOT"):
            raise AssertionError("gnuplot is not installed: bench-report renders its charts with "
                                 "it (run scripts/setup, which installs gnuplot-nox)")
        cls.tmp = tempfile.mkdtemp(prefix="netbuf-bench-report.")
        cls.out = os.path.join(cls.tmp, "out")
        cls.img = os.path.join(cls.tmp, "img")
        cls.proc = bench_report("--quick", "--only", "utf8_bench", "--build-dir", ARGS.build_dir,
                                "--out", cls.out, "--img", cls.img)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_exits_zero_and_shows_progress(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stdout + self.proc.stderr)
        self.assertIn("[1/2] utf8_bench", self.proc.stdout)
        self.assertIn("[2/2] charts", self.proc.stdout)

    def test_raw_results_are_google_benchmark_json(self):
        with open(os.path.join(self.out, "utf8_bench.json"), encoding="utf-8") as f:
            doc = json.load(f)
        runs = [b for b in doc["benchmarks"] if b["run_type"] == "iteration"]
        names = {b["run_name"] for b in runs}
        # --quick runs the first two groups of the text chart: writeAscii on 1 KiB and 128 B.
        self.assertIn("writeAscii/ascii-1024/netbuf", names)
        self.assertIn("writeAscii/ascii-128/scalar-loop", names)
        self.assertTrue(all(n.startswith("writeAscii/ascii-") for n in names), names)
        self.assertTrue(all(b["repetitions"] == 1 and b["cpu_time"] > 0 for b in runs))
        self.assertEqual(doc["context"]["executable"],
                         os.path.join(os.path.abspath(ARGS.build_dir), "microbench", "utf8_bench"))

    def test_text_chart_and_summary_are_svg(self):
        check_svg(self, os.path.join(self.img, "text.svg"),
                  ["Text fast paths", "netbuf", "scalar loop", "writeAscii", "ascii-1024",
                   "--quick smoke run"])
        check_svg(self, os.path.join(self.img, "summary.svg"), ["text kernels", "vs scalar loop"])

    def test_only_the_sections_that_ran_are_drawn(self):
        self.assertEqual(sorted(os.listdir(self.img)), ["summary.svg", "text.svg"])
        with open(os.path.join(self.out, "charts.json"), encoding="utf-8") as f:
            charts = json.load(f)
        self.assertEqual(list(charts["charts"]), ["text"])
        self.assertEqual([s["chart"] for s in charts["summary"]], ["text"])
        self.assertGreater(charts["summary"][0]["speedup"], 0)


def fake_benchmark_file(path, rows):
    """A Google Benchmark JSON file: rows is {name: [cpu ns per repetition]}."""
    benchmarks = []
    for name, times in rows.items():
        for k, t in enumerate(times):
            benchmarks.append({"name": name, "run_name": name, "run_type": "iteration",
                               "repetitions": len(times), "repetition_index": k, "iterations": 1000,
                               "real_time": t, "cpu_time": t, "time_unit": "ns"})
        benchmarks.append({"name": name + "_median", "run_name": name, "run_type": "aggregate",
                           "aggregate_name": "median", "real_time": -1.0, "cpu_time": -1.0,
                           "time_unit": "ns"})
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"context": {}, "benchmarks": benchmarks}, f)


class RenderFromResults(unittest.TestCase):
    """--no-run on result files of known figures: medians, speed-ups and their geometric mean."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="netbuf-bench-report.")
        self.out = os.path.join(self.tmp, "out")
        self.img = os.path.join(self.tmp, "img")
        os.makedirs(self.out)

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def test_medians_and_speedups(self):
        fake_benchmark_file(os.path.join(self.out, "composite_bench.json"), {
            # composite 2x slower than contiguous (medians 400 and 200; 999 is an outlier)
            "read/readLong/composite_8x512": [400, 999, 390, 410, 405],
            "read/readLong/contiguous_4096": [200, 210, 190, 1, 205],
            # composite 2x faster than copying
            "build/composite_of_slices/16": [100],
            "build/copy_into_one/16": [200],
        })
        with open(os.path.join(self.out, "echo.json"), "w", encoding="utf-8") as f:
            rows = [{"impl": impl, "connections": 1, "size": 128, "window": 64, "msgs_per_s": rate}
                    for impl, rate in (("asio", 1000.0), ("netbuf", 1500.0))]
            json.dump({"rounds": [{"results": rows, "ok": True}]}, f)
        proc = bench_report("--no-run", "--out", self.out, "--img", self.img)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        with open(os.path.join(self.out, "charts.json"), encoding="utf-8") as f:
            charts = json.load(f)
        groups = {g["label"]: g["values"] for g in charts["charts"]["composite"]["groups"]}
        self.assertEqual(groups["512 x readLong 8 x 512 B"], {"composite": 405, "baseline": 200})
        self.assertIsNone(groups["gather 16 components"]["composite"])
        summary = {s["chart"]: s for s in charts["summary"]}
        self.assertEqual(sorted(summary), ["composite", "echo"])
        per_group = {g["label"]: g["speedup"] for g in summary["composite"]["groups"]}
        self.assertAlmostEqual(per_group["512 x readLong 8 x 512 B"], 200 / 405)
        self.assertAlmostEqual(per_group["build from 16 slices"], 2.0)
        self.assertAlmostEqual(summary["composite"]["speedup"], math.sqrt(200 / 405 * 2.0))
        # Echo is a rate: netbuf's messages per second over the plain Asio server's.
        self.assertAlmostEqual(summary["echo"]["speedup"], 1.5)
        self.assertEqual(summary["echo"]["label"], "echo server vs plain Asio")
        check_svg(self, os.path.join(self.img, "composite.svg"),
                  ["netbuf CompositeByteBuf", "readLong", "build from", "medians; lower is better"])
        check_svg(self, os.path.join(self.img, "echo.svg"),
                  ["netbuf echo server", "1 conn", "medians; higher is better"])
        check_svg(self, os.path.join(self.img, "summary.svg"), ["0.99x", "1.50x"])
        self.assertFalse(os.path.exists(os.path.join(self.img, "text.svg")))

    def test_echo_summary_is_against_netty_where_measured(self):
        def write(name, rows):
            with open(os.path.join(self.out, name), "w", encoding="utf-8") as f:
                json.dump({"rounds": [{"results": rows}]}, f)

        case = {"connections": 16, "size": 128, "window": 64}
        # Three rounds in-process: the median of netbuf's 900, 1000, 5000 is 1000.
        with open(os.path.join(self.out, "echo.json"), "w", encoding="utf-8") as f:
            json.dump({"rounds": [{"results": [dict(case, impl="netbuf", msgs_per_s=r),
                                               dict(case, impl="asio", msgs_per_s=1000.0)]}
                                  for r in (900.0, 5000.0, 1000.0)]}, f)
        write("netty_echo.json", [dict(case, impl="netty", msgs_per_s=400.0),
                                  dict(case, impl="netbuf", msgs_per_s=1000.0)])
        proc = bench_report("--no-run", "--out", self.out, "--img", self.img)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        with open(os.path.join(self.out, "charts.json"), encoding="utf-8") as f:
            charts = json.load(f)
        values = charts["charts"]["echo"]["groups"][5]["values"]
        self.assertEqual(values, {"netbuf": 1000.0, "asio": 1000.0, "netbuf_own": 1000.0,
                                  "netty": 400.0})
        self.assertEqual(charts["summary"][0]["label"], "echo server vs Netty 4.1")
        self.assertAlmostEqual(charts["summary"][0]["speedup"], 2.5)
        check_svg(self, os.path.join(self.img, "echo.svg"),
                  ["Netty 4.1 echo server, own process", "16 conns"])

    def test_unreadable_result_file_is_an_error(self):
        with open(os.path.join(self.out, "json_bench.json"), "w", encoding="utf-8") as f:
            f.write('{"benchmarks": [')
        proc = bench_report("--no-run", "--out", self.out, "--img", self.img)
        self.assertEqual(proc.returncode, 1)
        self.assertIn("json_bench.json", proc.stderr)


class NettyTable(unittest.TestCase):
    """scripts/netty-echo-bench's table, as bench-report reads it (no Netty needed)."""

    def test_rows_become_echo_results(self):
        sys.path.insert(0, os.path.join(ARGS.source_dir, "scripts"))
        sys.dont_write_bytecode = True
        from bench_report.main import parse_netty_table
        text = (
            "setup: all build dependencies present\n"
            "conns  size    window    Netty msg/s  netbuf msg/s  ratio | Netty us/msg netbuf "
            "us/msg  ratio | server cores (Netty, netbuf)\n"
            "1      128     64             170688        679104  3.98x |       1.2303       "
            "0.2062  5.97x | 0.21, 0.14\n"
            "16     16384   1                1597         14843  9.29x |     156.5435      "
            "14.1481 11.06x | 0.25, 0.21\n")
        self.assertEqual(parse_netty_table(text), [
            {"connections": 1, "size": 128, "window": 64, "impl": "netty", "msgs_per_s": 170688.0},
            {"connections": 1, "size": 128, "window": 64, "impl": "netbuf", "msgs_per_s": 679104.0},
            {"connections": 16, "size": 16384, "window": 1, "impl": "netty", "msgs_per_s": 1597.0},
            {"connections": 16, "size": 16384, "window": 1, "impl": "netbuf", "msgs_per_s": 14843.0},
        ])
        self.assertEqual(parse_netty_table("server exited\n"), [])


class MissingGnuplot(unittest.TestCase):
    def test_fails_before_running_anything(self):
        tmp = tempfile.mkdtemp(prefix="netbuf-bench-report.")
        try:
            env = dict(os.environ, NETBUF_GNUPLOT=os.path.join(tmp, "no-such-gnuplot"))
            proc = bench_report("--quick", "--only", "utf8_bench", "--build-dir", ARGS.build_dir,
                                "--out", os.path.join(tmp, "out"), "--img", os.path.join(tmp, "img"),
                                env=env)
            self.assertEqual(proc.returncode, 1)
            self.assertIn("gnuplot not found", proc.stderr)
            self.assertIn("gnuplot-nox", proc.stderr)
            self.assertNotIn("[1/2]", proc.stdout)
            self.assertFalse(os.path.exists(os.path.join(tmp, "out", "utf8_bench.json")))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


class Usage(unittest.TestCase):
    def test_unknown_program_is_a_usage_error(self):
        proc = bench_report("--only", "no_such_bench", "--no-run")
        self.assertEqual(proc.returncode, 2)
        self.assertIn("invalid choice", proc.stderr)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--source-dir", required=True)
    parser.add_argument("--build-dir", required=True)
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
