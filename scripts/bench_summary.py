#!/usr/bin/env python3
"""Compact view of a tally-bench CSV: for each (operation, type, op, n) the time of the
copy, of CUB, and of chosen tally rows, with percent of the copy and speedup over CUB.
The segmented table's rows (operations segmented_scan, segmented_reduce, batched_scan,
one case per `variant`) follow in a section of their own: for each (operation, type, n,
variant) the copy, CUB and every tally row.

    scripts/bench_summary.py results/bench.csv [--impl tally/automatic ...]

CSVs without a `variant` column read too (no segmented section).
"""
import argparse
import csv
import collections

SEGMENTED_OPERATIONS = ("segmented_scan", "segmented_reduce", "batched_scan")


def cell(r, width=14):
    """time (us), %copy and speedup over CUB of a row, as a fixed-width text ('!' after the
    time: the row's check failed)."""
    t = float(r["median_s"]) * 1e6
    pct = f"{float(r['pct_of_copy']):5.1f}" if r["pct_of_copy"] else "    -"
    x = f"{float(r['speedup_vs_peer']):4.2f}" if r["speedup_vs_peer"] else "   -"
    chk = "" if r["check"] in ("ok", "OK", "") else "!"
    return f"{t:{width - 1}.2f}{chk:1} {pct} {x}  "


def short(impl):
    """A segmented row's column title: tally::inclusive_scan_by_key -> scan_by_key."""
    return impl.split("::")[-1].replace("inclusive_", "")[:16]


def us(r):
    return f"{float(r['median_s'])*1e6:9.2f}" if r else f"{'-':>9}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("--impl", nargs="*", default=["tally/automatic", "tally/decoupled_lookback/deterministic",
                                                  "tally/chained/warp_scans"])
    args = ap.parse_args()
    groups = collections.OrderedDict()
    segmented = collections.OrderedDict()  # (operation, type, n, variant) -> {impl: row}
    copies = {}  # (type, n) -> the copy row: copies have operation "copy" and no operator
    with open(args.csv) as f:
        for r in csv.DictReader(f):
            if r["device"].startswith("cpu") or "CPU" in r["device"]:
                continue
            if r["operation"] == "copy":
                copies.setdefault((r["type"], int(r["n"])), r)
                continue
            variant = r.get("variant") or ""
            if r["operation"] in SEGMENTED_OPERATIONS or variant:
                key = (r["operation"], r["type"], int(r["n"]), variant)
                segmented.setdefault(key, {})[r["impl"]] = r
                continue
            key = (r["operation"], r["type"], r["op"], int(r["n"]))
            groups.setdefault(key, {})[r["impl"]] = r
    if groups or not segmented:
        print(f"{'operation':15} {'type':6} {'op':4} {'n':>11} {'copy us':>9} {'cub us':>9}  "
              + "  ".join(f"{i.split('/')[-1][:14]:>14} %copy xCUB" for i in args.impl))
    for (what, typ, op, n), rows in groups.items():
        copy = copies.get((typ, n))
        cub = next((r for k, r in rows.items() if k.startswith("cub::")), None)
        line = f"{what:15} {typ:6} {op:4} {n:>11} {us(copy)} {us(cub)}  "
        for impl in args.impl:
            r = rows.get(impl)
            if r is None:
                line += f"{'-':>14} {'-':>5} {'-':>4}  "
                continue
            line += cell(r)
        print(line)
    if not segmented:
        return

    # The segmented table: one header per operation, naming its tally rows.
    by_operation = collections.OrderedDict()
    for key in segmented:
        by_operation.setdefault(key[0], []).append(key)
    for what, keys in by_operation.items():
        impls = []
        for key in keys:
            for impl in segmented[key]:
                if impl.startswith("tally") and impl not in impls:
                    impls.append(impl)
        print()
        print(f"{'operation':16} {'type':6} {'n':>11} {'variant':16} {'copy us':>9} {'cub us':>9}  "
              + "  ".join(f"{short(i):>16} %copy xCUB" for i in impls))
        for key in keys:
            _, typ, n, variant = key
            rows = segmented[key]
            copy = copies.get((typ, n))
            cub = next((r for k, r in rows.items() if k.startswith("cub::")), None)
            line = f"{what:16} {typ:6} {n:>11} {variant:16} {us(copy)} {us(cub)}  "
            for impl in impls:
                r = rows.get(impl)
                line += cell(r, 16) if r else f"{'-':>16} {'-':>5} {'-':>4}  "
            print(line)


if __name__ == "__main__":
    main()
