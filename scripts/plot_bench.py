#!/usr/bin/env python3
"""Plot tally-bench results: GB/s against n, one line per implementation.

    python3 scripts/plot_bench.py results/bench.csv results/bench.png [--all-threads]

Reads the CSV that `tally-bench --csv FILE` writes and draws one panel per (device,
operation, type, operator), with n on a log2 axis and the throughput (bytes read +
written per second) on the other. The copies of the same bytes are drawn dashed in every
panel of their device and type: they are the practical limit of a scan. CPU rows measured
at several thread counts are shown at the largest count unless --all-threads is given.
The peers (CUB; sequential std::) are drawn thick in black, tally's default
configuration thick in red.
Rows whose output check failed are marked with a red cross.

Needs matplotlib; without it the script says so and exits with status 2.
"""

import argparse
import csv
import math
import sys
from collections import defaultdict


def load_rows(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        r["n"] = int(r["n"])
        r["threads"] = int(r["threads"])
        r["gbps"] = float(r["gbps"])
    return rows


def line_label(row, all_threads):
    """The legend entry of a row's line: the implementation, with its thread count
    where it ran at several."""
    if row["device"] == "cpu" and (all_threads or row["threads"] > 1):
        return f'{row["impl"]} @{row["threads"]}'
    return row["impl"]


def reference_colour(label):
    """The lines drawn thick in a colour of their own: the peers (CUB; the sequential std::
    algorithm) in black, tally's default configuration in red. None for the others."""
    if "cub::" in label or "(seq)" in label:
        return "black"
    if label == "tally/automatic" or label.startswith("tally::cpu::"):
        return "crimson"
    return None


def keep_largest_thread_count(rows):
    """For each CPU implementation keep only the rows at its largest thread count."""
    largest = defaultdict(int)
    for r in rows:
        key = (r["device"], r["operation"], r["impl"])
        largest[key] = max(largest[key], r["threads"])
    return [r for r in rows if r["threads"] == largest[(r["device"], r["operation"], r["impl"])]]


OPERATION_ORDER = {"inclusive_scan": 0, "exclusive_scan": 1, "reduce": 2, "copy": 3}
TYPE_ORDER = {"int32": 0, "float": 1, "int64": 2, "double": 3}


def panel_order(panel):
    """Panels by device, then operation, type and operator in the bench's own order."""
    device, operation, type_name, op = panel
    return (device, OPERATION_ORDER.get(operation, 9), TYPE_ORDER.get(type_name, 9), op != "plus", op)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv", help="CSV written by tally-bench --csv")
    parser.add_argument("png", help="the picture to write")
    parser.add_argument("--all-threads", action="store_true",
                        help="one line per CPU thread count (default: the largest only)")
    parser.add_argument("--linear-y", action="store_true",
                        help="a linear GB/s axis (default: logarithmic, as in-cache copies "
                             "at small n are many times faster than anything else)")
    args = parser.parse_args()

    try:
        import matplotlib
        matplotlib.use("Agg")  # no display needed
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_bench.py: matplotlib is not installed; install it with "
              "'python3 -m pip install matplotlib' (or apt-get install python3-matplotlib)",
              file=sys.stderr)
        return 2

    try:
        rows = load_rows(args.csv)
    except (OSError, KeyError, ValueError) as e:
        print(f"plot_bench.py: cannot read {args.csv}: {e}", file=sys.stderr)
        return 1
    if not rows:
        print(f"plot_bench.py: {args.csv} has no rows", file=sys.stderr)
        return 1
    if not args.all_threads:
        rows = keep_largest_thread_count(rows)

    copies = [r for r in rows if r["operation"] == "copy"]
    measured = [r for r in rows if r["operation"] != "copy"]
    panels = sorted({(r["device"], r["operation"], r["type"], r["op"]) for r in measured},
                    key=panel_order)
    if not panels:  # only copies in the file: one panel per device and type
        panels = sorted({(r["device"], "copy", r["type"], "-") for r in copies}, key=panel_order)

    # One style per line label across all panels, so that a colour means the same
    # implementation everywhere and one legend serves the whole figure.
    copy_labels = sorted({line_label(r, args.all_threads) for r in copies})
    other_labels = sorted({line_label(r, args.all_threads) for r in measured})
    styles = {}
    for i, label in enumerate(copy_labels):
        grey = 0.2 + 0.15 * (i % 4)
        styles[label] = dict(linestyle="--", linewidth=1.0, color=(grey, grey, grey))
    plain = [label for label in other_labels if reference_colour(label) is None]
    for label in other_labels:
        colour = reference_colour(label)
        if colour is not None:
            styles[label] = dict(linestyle="-", marker=".", linewidth=2.4, color=colour)
        else:
            i = plain.index(label)
            styles[label] = dict(linestyle=["-", "-.", ":"][(i // 20) % 3], marker=".",
                                 linewidth=1.2, color=plt.cm.tab20(i % 20))

    ncols = min(3, len(panels))
    nrows = math.ceil(len(panels) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(6.0 * ncols, 4.2 * nrows), squeeze=False)
    for ax in axes.flat[len(panels):]:
        ax.set_visible(False)

    handles = {}
    for ax, (device, operation, type_name, op) in zip(axes.flat, panels):
        panel_rows = [r for r in measured
                      if (r["device"], r["operation"], r["type"], r["op"]) ==
                      (device, operation, type_name, op)]
        panel_rows += [r for r in copies if r["device"] == device and r["type"] == type_name]
        lines = defaultdict(list)
        for r in panel_rows:
            lines[line_label(r, args.all_threads)].append(r)
        for label in copy_labels + other_labels:
            points = sorted(lines.get(label, []), key=lambda r: r["n"])
            if not points:
                continue
            (handle,) = ax.plot([r["n"] for r in points], [r["gbps"] for r in points],
                                label=label, **styles[label])
            handles.setdefault(label, handle)
            failed = [r for r in points if r["check"] == "FAILED"]
            if failed:
                ax.scatter([r["n"] for r in failed], [r["gbps"] for r in failed],
                           marker="x", color="red", s=60, zorder=5)

        ax.set_xscale("log", base=2)
        if not args.linear_y:
            ax.set_yscale("log")
        ax.set_xlabel("n (elements)")
        ax.set_ylabel("GB/s (bytes read + written)")
        title_op = "" if op == "-" else f" {op}"
        ax.set_title(f"{device}: {operation} {type_name}{title_op}", fontsize=10)
        ax.grid(True, which="both", alpha=0.25)

    labels = [l for l in copy_labels + other_labels if l in handles]
    legend_cols = min(4, max(1, len(labels)))
    legend_rows = math.ceil(len(labels) / legend_cols)
    # Room under the panels for the legend: about 0.22 inch per legend row.
    bottom = min(0.45, (0.3 + 0.22 * legend_rows) / fig.get_figheight())
    fig.legend([handles[l] for l in labels], labels, loc="lower center", ncol=legend_cols,
               fontsize=8, frameon=False)
    fig.suptitle("tally-bench: throughput against n (dashed: copies of the same bytes; "
                 "red x: failed check)")
    fig.tight_layout(rect=(0, bottom, 1, 0.97))
    try:
        fig.savefig(args.png, dpi=110, bbox_inches="tight")  # keep legend and title whole
    except OSError as e:
        print(f"plot_bench.py: cannot write {args.png}: {e}", file=sys.stderr)
        return 1
    print(f"wrote {args.png} ({len(panels)} panels)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
