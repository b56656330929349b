#!/usr/bin/env python3
"""Draws one SVG chart per benchmark group: each peer's and each floor's median time as a ratio
to ringsteal's (the ratio table of book/src/benchmarks.md, as bars), with the run's date,
machine and commit.

Standard library only (Python 3.11+). Two sources, one drawing:

  bench_charts.py --results DIR --date D --machine M --commit C --out DIR
      from criterion results (a CRITERION_HOME), read and checked by bench_results.py, as
      scripts/bench_report.sh does after every run;
  bench_charts.py --from-report book/src/benchmarks.md --out DIR
      from the ratio table and the "Measured ..." line a report already wrote, to redraw the
      charts of the committed results without running anything.

A group is the first part of a benchmark id (`spawn_join`, `ping_pong_rtt`, ...); its chart has
one cluster of bars per row of bench_results.ROWS in that group. `--markdown FILE` also writes
the image lines the report puts above its tables.
"""

from __future__ import annotations

import argparse
import math
import pathlib
import re
import sys
from dataclasses import dataclass, field
from xml.sax.saxutils import escape

sys.dont_write_bytecode = True  # no scripts/__pycache__ left in the work tree
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import bench_results as br  # noqa: E402  (the script directory is on the path only now)

COLORS = {"tokio": "#4e79a7", "compio": "#e8872e", "spargio": "#3f9e8f", "floor": "#8a96a3"}


@dataclass
class Bar:
    """One bar: a peer or a floor against ringsteal. `value` is the ratio (peer / ringsteal),
    or None with `note` saying why there is none ("n/e" or "missing")."""

    series: str
    kind: str  # "peer" or "floor"
    value: float | None
    note: str | None = None


@dataclass
class Cluster:
    """One row of the ratio table: a ringsteal implementation of a workload."""

    label: str
    own: str  # ringsteal's median, formatted
    bars: list[Bar] = field(default_factory=list)


@dataclass
class Run:
    date: str
    machine: str
    commit: str
    groups: dict[str, list[Cluster]] = field(default_factory=dict)


def group_of(row: dict) -> str:
    return row["id"].split("/", 1)[0]


def cluster_label(group: str, workload: str, variant: str) -> str:
    sub = workload[len(group) + 1:] if workload.startswith(group + "/") else ""
    parts = [sub] if sub else []
    if variant != "ringsteal" or not sub:
        parts.append(variant)
    return " · ".join(parts)


# ------------------------------------------------------------------ the sources

def run_from_results(results: pathlib.Path, date: str, machine: str, commit: str) -> Run:
    res = br.Results(results)
    run = Run(date, machine, commit)
    for row in br.ROWS:
        try:
            own = br.fmt_ns(br.compared_ns(res, row, row["id"]))
        except br.ResultError:
            own = "missing"
        cl = Cluster(cluster_label(group_of(row), row["workload"], row["variant"]), own)
        for peer in br.PEERS:
            if row["peers"][peer] == br.NR:
                continue  # not run on purpose (the http groups): no bar
            cl.bars.append(_bar(res, row, peer, "peer", row["peers"][peer]))
        for label, fid in row.get("floors", []):
            cl.bars.append(_bar(res, row, label, "floor", fid))
        run.groups.setdefault(group_of(row), []).append(cl)
    return run


def _bar(res: br.Results, row: dict, series: str, kind: str, bench_id: str) -> Bar:
    if bench_id == br.NE:
        return Bar(series, kind, None, br.NE)
    try:
        return Bar(series, kind, br.ratio(res, row, bench_id))
    except br.ResultError:
        return Bar(series, kind, None, "missing")


MEASURED = re.compile(r"^Measured (?P<date>.+?) on (?P<machine>.+?); commit `(?P<commit>[^`]+)`", re.M)


def run_from_report(text: str) -> Run:
    """The charts' data from a report section that bench_report.sh wrote (its ratio table)."""
    start, end = "<!-- bench-report:start -->", "<!-- bench-report:end -->"
    if start not in text or end not in text:
        raise ValueError(f"no {start} ... {end} section")
    section = text.split(start, 1)[1].split(end, 1)[0]
    m = MEASURED.search(section)
    if not m:
        raise ValueError("no 'Measured <date> on <machine>; commit `<commit>`' line in the section")
    run = Run(m["date"], m["machine"], m["commit"])
    by_key = {(r["workload"], r["variant"]): r for r in br.ROWS}
    header = "| workload | ringsteal | vs tokio | vs compio | vs spargio | vs floor |"
    lines = section.splitlines()
    if header not in lines:
        raise ValueError("no ratio table in the section")
    for line in lines[lines.index(header) + 2:]:
        if not line.startswith("| `"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 6:
            raise ValueError(f"ratio table row with {len(cells)} cells: {line}")
        names = re.findall(r"`([^`]+)`", cells[0])
        workload, variant = names[0], (names[1] if len(names) > 1 else "ringsteal")
        row = by_key.get((workload, variant))
        group = group_of(row) if row else workload.split("/", 1)[0].split(" ", 1)[0]
        cl = Cluster(cluster_label(group, workload, variant), cells[1])
        for peer, cell in zip(br.PEERS, cells[2:5]):
            if cell == br.NR:
                continue
            cl.bars.append(_parse_cell(peer, "peer", cell))
        if cells[5] not in ("—", ""):
            for part in cells[5].split("; "):
                label, cell = part.rsplit(" ", 1)
                cl.bars.append(_parse_cell(label, "floor", cell))
        run.groups.setdefault(group, []).append(cl)
    if not run.groups:
        raise ValueError("the ratio table has no rows")
    return run


def _parse_cell(series: str, kind: str, cell: str) -> Bar:
    cell = cell.replace("*", "").strip()
    if cell in (br.NE, "missing"):
        return Bar(series, kind, None, cell)
    return Bar(series, kind, float(cell.rstrip("×")))


# ------------------------------------------------------------------ the drawing

WIDTH = 760
LABEL_W = 170  # series names, right-aligned before the plot
PLOT_X0, PLOT_X1 = LABEL_W + 20, WIDTH - 70  # room on the right for the last value label
BAR_H, BAR_GAP, TITLE_H, CLUSTER_GAP = 14, 5, 22, 12
FONT = '"DejaVu Sans", "Segoe UI", Helvetica, Arial, sans-serif'


# The smallest ratio drawn to scale: a table cell can read 0.00× (rounded), which has no log.
MIN_DRAWN = 2.0 ** -10


def _domain(values: list[float]) -> tuple[int, int]:
    """Powers of two that bound every ratio and 1×, with room for a value label left of a
    bar that ends near the low edge."""
    lo = max(min(values + [1.0]), MIN_DRAWN)
    hi = max(values + [1.0])
    lo_p = min(math.floor(math.log2(lo)), -1)
    hi_p = max(math.ceil(math.log2(hi)), 1)
    ppu = (PLOT_X1 - PLOT_X0) / (hi_p - lo_p)
    if (math.log2(lo) - lo_p) * ppu < 44:
        lo_p -= 1
    return lo_p, hi_p


def chart_svg(group: str, clusters: list[Cluster], run: Run) -> str:
    values = [b.value for c in clusters for b in c.bars if b.value is not None]
    lo_p, hi_p = _domain(values)

    def x(v: float) -> float:
        return PLOT_X0 + (math.log2(max(v, MIN_DRAWN)) - lo_p) / (hi_p - lo_p) * (PLOT_X1 - PLOT_X0)

    top = 62
    plot_h = sum(TITLE_H + len(c.bars) * (BAR_H + BAR_GAP) + CLUSTER_GAP for c in clusters)
    axis_y = top + plot_h
    height = axis_y + 92
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" '
        f'width="{WIDTH}" height="{height}" role="img" aria-labelledby="t d" '
        f'font-family=\'{FONT}\'>',
        f'<title id="t">{escape(group)}: peer median / ringsteal median</title>',
        f'<desc id="d">{escape(_describe(group, clusters, run))}</desc>',
        f'<rect width="{WIDTH}" height="{height}" rx="10" fill="#ffffff"/>',
        f'<text x="16" y="26" font-size="16" font-weight="bold" fill="#1b2733">{escape(group)}</text>',
        f'<text x="16" y="45" font-size="11.5" fill="#52606d">peer median / ringsteal median, '
        f'log scale: right of 1×, ringsteal took less time</text>',
    ]
    # Grid: a line per power of two, 1× heavier.
    step = 1 if hi_p - lo_p <= 8 else 2
    for p in range(lo_p, hi_p + 1, step):
        gx = x(2.0 ** p)
        one = p == 0
        out.append(f'<line x1="{gx:.1f}" y1="{top - 6}" x2="{gx:.1f}" y2="{axis_y}" '
                   f'stroke="{"#52606d" if one else "#dde3ea"}" stroke-width="{1.4 if one else 1}"/>')
        out.append(f'<text x="{gx:.1f}" y="{axis_y + 16}" font-size="11" text-anchor="middle" '
                   f'fill="#3e4c59">{_tick(p)}</text>')
    y = top
    for c in clusters:
        out.append(f'<text x="16" y="{y + 14}" font-size="12.5" font-weight="bold" fill="#1b2733">'
                   f'{escape(c.label)}<tspan dx="10" font-weight="normal" fill="#52606d">'
                   f'ringsteal: {escape(c.own)}</tspan></text>')
        y += TITLE_H
        for b in c.bars:
            name = b.series if b.kind == "peer" else f"floor: {b.series}"
            out.append(f'<text x="{LABEL_W + 10}" y="{y + BAR_H - 3}" font-size="11" '
                       f'text-anchor="end" fill="#3e4c59">{escape(name)}</text>')
            out.append(_bar_svg(b, y, x))
            y += BAR_H + BAR_GAP
        y += CLUSTER_GAP
    out.append(f'<line x1="{PLOT_X0}" y1="{axis_y}" x2="{PLOT_X1}" y2="{axis_y}" stroke="#9aa5b1"/>')
    # Legend and provenance.
    ly = axis_y + 40
    lx = 16
    for series, color in COLORS.items():
        out.append(f'<rect x="{lx}" y="{ly - 10}" width="12" height="12" rx="2" fill="{color}"/>')
        out.append(f'<text x="{lx + 17}" y="{ly}" font-size="11" fill="#3e4c59">{series}</text>')
        lx += 90
    out.append(f'<text x="{lx + 10}" y="{ly}" font-size="11" fill="#3e4c59">n/e: the peer cannot '
               f'express the workload</text>')
    out.append(f'<text x="16" y="{ly + 22}" font-size="11" fill="#52606d">'
               f'{escape(f"Measured {run.date} on {run.machine}; commit {run.commit}")}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _bar_svg(b: Bar, y: float, x) -> str:
    x1 = x(1.0)
    if b.value is None:
        fill = "#a3231d" if b.note == "missing" else "#7b8794"
        return (f'<text x="{x1 + 6:.1f}" y="{y + BAR_H - 3}" font-size="11" font-style="italic" '
                f'fill="{fill}">{escape(b.note or "")}</text>')
    xv = x(b.value)
    left, w = min(x1, xv), max(abs(xv - x1), 1.0)
    color = COLORS["floor"] if b.kind == "floor" else COLORS.get(b.series, COLORS["floor"])
    ahead = b.value >= 1
    label = f"{b.value:.2f}×"
    tx, anchor = (xv + 5, "start") if ahead else (xv - 5, "end")
    weight = ' font-weight="bold"' if ahead else ""
    return (f'<rect x="{left:.1f}" y="{y}" width="{w:.1f}" height="{BAR_H}" rx="2" fill="{color}"/>'
            f'<text x="{tx:.1f}" y="{y + BAR_H - 3}" font-size="11" text-anchor="{anchor}"'
            f'{weight} fill="#1b2733">{label}</text>')


def _tick(p: int) -> str:
    return f"1/{2 ** -p}×" if p < -2 else f"{2.0 ** p:g}×"


def _describe(group: str, clusters: list[Cluster], run: Run) -> str:
    parts = []
    for c in clusters:
        bars = ", ".join(f"{b.series} {b.value:.2f}" if b.value is not None else f"{b.series} {b.note}"
                         for b in c.bars)
        parts.append(f"{c.label} (ringsteal {c.own}): {bars}")
    return (f"{group}, ratio of each peer's and floor's median to ringsteal's (above 1: ringsteal "
            f"faster). " + "; ".join(parts) + f". Measured {run.date} on {run.machine}, commit {run.commit}.")


def write_charts(run: Run, out: pathlib.Path) -> list[str]:
    """Writes <group>.svg for every group into `out` (removing charts of groups no longer
    there); returns the groups in table order."""
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.svg"):
        if old.stem not in run.groups:
            old.unlink()
    for group, clusters in run.groups.items():
        (out / f"{group}.svg").write_text(chart_svg(group, clusters, run))
    return list(run.groups)


def markdown(groups: list[str], rel_dir: str) -> str:
    return "\n".join(f"![{g}: peer median / ringsteal median]({rel_dir}/{g}.svg)\n" for g in groups)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--results", help="CRITERION_HOME of a run")
    src.add_argument("--from-report", help="a markdown file with a bench-report section")
    ap.add_argument("--date", help="with --results: when the run was measured")
    ap.add_argument("--machine", help="with --results: CPU, vCPUs, kernel")
    ap.add_argument("--commit", help="with --results: the commit measured")
    ap.add_argument("--out", required=True, help="directory for <group>.svg")
    ap.add_argument("--markdown", help="also write the image lines here")
    ap.add_argument("--rel-dir", default="img/bench", help="charts' directory as the markdown links it")
    args = ap.parse_args()
    try:
        if args.results:
            if not (args.date and args.machine and args.commit):
                ap.error("--results needs --date, --machine and --commit")
            run = run_from_results(pathlib.Path(args.results), args.date, args.machine, args.commit)
        else:
            run = run_from_report(pathlib.Path(args.from_report).read_text())
    except (br.ResultError, ValueError, OSError) as e:
        print(f"bench_charts: {e}", file=sys.stderr)
        return 1
    groups = write_charts(run, pathlib.Path(args.out))
    if args.markdown:
        pathlib.Path(args.markdown).write_text(markdown(groups, args.rel_dir))
    print(f"bench_charts: {len(groups)} charts in {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
