#!/usr/bin/env python3
"""Compact view of a tally-bench CSV: for each (operation, type, op, n) the time of the
copy, of CUB, and of chosen tally rows, with percent of the copy and speedup over CUB.

    scripts/bench_summary.py results/bench.csv [--impl tally/automatic ...]
"""
import argparse
import csv
import collections


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("--impl", nargs="*", default=["tally/automatic", "tally/decoupled_lookback/deterministic",
                                                  "tally/chained/warp_scans"])
    args = ap.parse_args()
    groups = collections.OrderedDict()
    copies = {}  # (type, n) -> the copy row: copies have operation "copy" and no operator
    with open(args.csv) as f:
        for r in csv.DictReader(f):
            if r["device"].startswith("cpu") or "CPU" in r["device"]:
                continue
            if r["operation"] == "copy":
                copies.setdefault((r["type"], int(r["n"])), r)
                continue
            key = (r["operation"], r["type"], r["op"], int(r["n"]))
            groups.setdefault(key, {})[r["impl"]] = r
    print(f"{'operation':15} {'type':6} {'op':4} {'n':>11} {'copy us':>9} {'cub us':>9}  "
          + "  ".join(f"{i.split('/')[-1][:14]:>14} %copy xCUB" for i in args.impl))
    for (what, typ, op, n), rows in groups.items():
        copy = copies.get((typ, n))
        cub = next((r for k, r in rows.items() if k.startswith("cub::")), None)
        line = f"{what:15} {typ:6} {op:4} {n:>11} "
        line += f"{float(copy['median_s'])*1e6:9.2f} " if copy else f"{'-':>9} "
        line += f"{float(cub['median_s'])*1e6:9.2f}  " if cub else f"{'-':>9}  "
        for impl in args.impl:
            r = rows.get(impl)
            if r is None:
                line += f"{'-':>14} {'-':>5} {'-':>4}  "
                continue
            t = float(r["median_s"]) * 1e6
            pct = f"{float(r['pct_of_copy']):5.1f}" if r["pct_of_copy"] else "    -"
            x = f"{float(r['speedup_vs_peer']):4.2f}" if r["speedup_vs_peer"] else "   -"
            chk = "" if r["check"] in ("ok", "OK", "") else "!"
            line += f"{t:13.2f}{chk:1} {pct} {x}  "
        print(line)


if __name__ == "__main__":
    main()
