"""Rendering the charts as SVG with gnuplot (Debian's gnuplot-nox; see docs/dependencies.md).

The script is written to gnuplot's standard input with the data inline (datablocks), so nothing
but the SVG is written. Text stays text (no embedded fonts, no rasters): the files are small and
their labels can be searched.
"""

import math
import os
import shutil
import subprocess

# netbuf's series in blues, baselines in contrasting colours (readable in grey and for the common
# colour-vision deficiencies: blue against orange and grey).
NETBUF_COLOURS = ["#1f5fa8", "#5b9bd5", "#9cc3e6", "#0b3a6e"]
BASELINE_COLOURS = ["#e07b39", "#8c8c8c", "#c9a227", "#6a4c93"]

# A spread (largest / smallest figure) above this draws the y axis on a log scale.
LOG_SCALE_SPREAD = 30.0


class RenderError(Exception):
    """gnuplot is missing or failed."""


def find_gnuplot():
    """The gnuplot executable: $NETBUF_GNUPLOT when set, else `gnuplot` on PATH."""
    exe = os.environ.get("NETBUF_GNUPLOT") or shutil.which("gnuplot")
    if not exe or not (os.path.isfile(exe) and os.access(exe, os.X_OK)):
        raise RenderError(
            "gnuplot not found (looked for " + (os.environ.get("NETBUF_GNUPLOT") or "gnuplot on PATH")
            + "): the charts are rendered with gnuplot's SVG terminal; install the Debian package "
            "gnuplot-nox (scripts/setup does)")
    return exe


def quote(text):
    """A gnuplot double-quoted string; a newline in text becomes a line break in the label."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _number(v):
    return "NaN" if v is None else f"{v:.6g}"


def _header(path, width, height, title):
    # `name` becomes the SVG's <title> (gnuplot allows only an identifier there).
    name = "netbuf_" + "".join(c if c.isalnum() else "_" for c in
                              os.path.splitext(os.path.basename(path))[0])
    return [
        "set encoding utf8",
        f"set terminal svg size {width},{height} noenhanced name \"{name}\" "
        "font \"sans,11\" background rgb \"white\"",
        f"set output {quote(path)}",
        f"set title {quote(title)} font \",13\"",
        "set datafile missing \"NaN\"",
        "set border 3 lc rgb \"#555555\"",
        "set xtics nomirror scale 0",
        "set ytics nomirror",
        "set grid ytics lc rgb \"#dddddd\" lt 1",
    ]


def _time_label(ns):
    for scale, unit in ((1e9, "s"), (1e6, "ms"), (1e3, "µs")):
        if ns >= scale:
            return f"{ns / scale:g} {unit}"
    return f"{ns:g} ns"


def _y_axis(values, unit):
    """gnuplot lines for the y axis of these (positive) figures, and whether it is logarithmic:
    a log scale where the spread needs it, else linear from 0, with headroom. unit "ns" labels
    a log axis in ns, µs, ms; anything else with k and M."""
    lo, hi = min(values), max(values)
    if hi / lo > LOG_SCALE_SPREAD:
        bottom = 10 ** math.floor(math.log10(lo / 2))
        top = 10 ** (math.log10(hi) + 0.35)
        # (A tic exactly on the range's edge loses its label: the range starts just below.)
        lines = ["set logscale y", f"set yrange [{bottom * 0.98:.6g}:{top:.6g}]"]
        if unit == "ns":
            ticks = []
            t = bottom
            while t <= top:
                ticks.append(f"{quote(_time_label(t))} {t:.6g}")
                t *= 10
            lines.append("set ytics (" + ", ".join(ticks) + ")")
        else:
            lines.append("set format y \"%.0s%c\"")
        return lines, True
    return ["unset logscale y", f"set yrange [0:{hi * 1.12:.6g}]", "set format y \"%.0s%c\""], False


def grouped_bars(path, title, ylabel, group_labels, series, table, unit="ns", note=None):
    """A clustered bar chart: table[g][s] is the figure of series s in group g (None: no bar).

    series: [(label, is_netbuf)]. Series and groups without any figure are left out; the y axis
    is logarithmic when the figures span more than LOG_SCALE_SPREAD (ylabel then says so).
    unit "ns": the figures are times in ns (a linear axis says "(ns)", a log axis is labelled in
    ns, µs, ms); any other unit is a plain count."""
    keep_s = [i for i in range(len(series)) if any(row[i] for row in table)]
    keep_g = [j for j in range(len(group_labels)) if any(table[j][i] for i in keep_s)]
    if not keep_s or not keep_g:
        raise RenderError(f"{path}: no figures to draw")
    values = [table[j][i] for j in keep_g for i in keep_s if table[j][i]]
    width = max(640, min(1400, 150 + 34 * len(keep_s) * len(keep_g) + 30 * len(keep_g)))
    lines = _header(path, width, 440, title)
    axis, log = _y_axis(values, unit)
    lines += axis
    lines += [
        f"set ylabel {quote(ylabel + (', log scale' if log else ' (ns)' if unit == 'ns' else ''))}",
        "set style data histograms",
        "set style histogram clustered gap 1",
        "set style fill solid 1.0 border lc rgb \"#333333\"",
        "set boxwidth 0.9 relative",
        "set key at screen 0.5, screen 0.015 center bottom horizontal maxrows 2 reverse Left "
        "samplen 1.5 spacing 1.1 width 2 font \",10\"",
        "set bmargin 7",
        "set xrange [-0.6:%g]" % (len(keep_g) - 0.4),
        "set xtics (" + ", ".join(f"{quote(group_labels[j])} {k}" for k, j in enumerate(keep_g)) + ")",
    ]
    if note:
        lines.append(f"set label 1 {quote(note)} at graph 0.01, graph 0.97 left font \",9\" "
                     "tc rgb \"#555555\"")
    lines.append("$data << EOD")
    for j in keep_g:
        lines.append(" ".join(_number(table[j][i]) for i in keep_s))
    lines.append("EOD")
    plots = []
    for col, i in enumerate(keep_s, start=1):
        label, is_netbuf = series[i]
        # A series keeps its colour whether or not the others have figures.
        rank = sum(1 for other in series[:i] if other[1] == is_netbuf)
        palette = NETBUF_COLOURS if is_netbuf else BASELINE_COLOURS
        colour = palette[rank % len(palette)]
        plots.append(f"{'$data' if col == 1 else chr(39) * 2} using {col} title {quote(label)} "
                     f"lc rgb \"{colour}\"")
    lines.append("plot " + ", \\\n     ".join(plots))
    _run(path, lines)


def ratio_bars(path, title, ylabel, labels, ratios, note=None):
    """One bar per section: netbuf's speed-up against its main baseline, log scale around 1."""
    if not ratios:
        raise RenderError(f"{path}: no figures to draw")
    width = max(640, 120 + 105 * len(ratios))
    lines = _header(path, width, 420, title)
    lo = min(min(ratios), 1.0)
    hi = max(max(ratios), 1.0)
    bottom = 10 ** (math.floor(math.log10(lo) * 2) / 2 - 0.05)
    top = 10 ** (math.log10(hi) + 0.3)
    ticks = [t for t in (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100) if bottom <= t <= top]
    lines += [
        "set logscale y",
        f"set yrange [{bottom:.6g}:{top:.6g}]",
        "set ytics (" + ", ".join(f"\"{t:g}x\" {t:g}" for t in ticks) + ")",
        f"set ylabel {quote(ylabel)}",
        "set style fill solid 1.0 border lc rgb \"#333333\"",
        "set boxwidth 0.6",
        "unset key",
        "set bmargin 4",
        "set xrange [-0.6:%g]" % (len(ratios) - 0.4),
        "set xtics (" + ", ".join(f"{quote(l)} {k}" for k, l in enumerate(labels)) + ")",
        "set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead lc rgb \"#333333\" dt 2",
    ]
    if note:
        lines.append(f"set label 1 {quote(note)} at graph 0.01, graph 0.97 left font \",9\" "
                     "tc rgb \"#555555\"")
    lines.append("$data << EOD")
    for k, r in enumerate(ratios):
        colour = 0x1F5FA8 if r >= 1 else 0xE07B39
        lines.append(f"{k} {r:.6g} {colour} {quote(f'{r:.2f}x')}")
    lines.append("EOD")
    # Each box spans from 1 (as fast as the baseline) to the ratio, up or down.
    lines.append("plot $data using 1:2:($1-0.3):($1+0.3):($2<1?$2:1):($2<1?1:$2):3 "
                 "with boxxyerror lc rgb variable notitle, \\\n"
                 "     '' using 1:($2>=1?$2*1.18:$2/1.18):4 with labels notitle font \",10\"")
    _run(path, lines)


def _run(path, lines):
    exe = find_gnuplot()
    script = "\n".join(lines) + "\n"
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    try:
        proc = subprocess.run([exe], input=script, text=True, capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise RenderError(f"gnuplot ({exe}) failed for {path}: {e}") from e
    if proc.returncode != 0 or not os.path.exists(path):
        raise RenderError(f"gnuplot failed for {path} (exit {proc.returncode}):\n{proc.stderr}\n"
                          f"--- script ---\n{script}")
