#!/usr/bin/env python3
"""Compares two tally-bench CSVs of the same GPU (A: before a change, B: after it), row by
row: the ratio to the copy (pct_of_copy) and the speedup over the peer (CUB) of every tally
row present in both. Prints the rows where B is worse than A by more than the tolerance,
and a summary line. Usage: ab_compare.py A.csv B.csv [--tolerance 0.02] [A2.csv B2.csv ...]
With several pairs (A, B, A2, B2, ...), a row counts as worse only if it is worse in every
pair (one run's noise does not make a regression)."""
import csv, sys

def rows(path):
    out = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if not r["impl"].startswith("tally"):
                continue
            key = (r["operation"], r["type"], r["op"], r["n"], r["impl"], r["variant"])
            out[key] = r
    return out

def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None

def main(argv):
    tol = 0.02
    if "--tolerance" in argv:
        i = argv.index("--tolerance")
        tol = float(argv[i + 1])
        del argv[i:i + 2]
    files = argv[1:]
    if len(files) < 2 or len(files) % 2:
        sys.exit(__doc__)
    pairs = [(rows(files[i]), rows(files[i + 1])) for i in range(0, len(files), 2)]
    keys = set(pairs[0][0]) & set(pairs[0][1])
    for a, b in pairs[1:]:
        keys &= set(a) & set(b)
    worse, compared, ratios = [], 0, []
    for k in sorted(keys):
        # the time of B over the time of A, through each row's own copy ratio (so the two
        # runs' copy speeds cancel) and its speedup over CUB
        bad_copy, bad_peer, seen = True, True, False
        detail = []
        for a, b in pairs:
            pa, pb = num(a[k]["pct_of_copy"]), num(b[k]["pct_of_copy"])
            sa, sb = num(a[k]["speedup_vs_peer"]), num(b[k]["speedup_vs_peer"])
            if pa and pb:
                seen = True
                r = pa / pb  # > 1: B slower against the copy
                ratios.append(r)
                bad_copy &= r > 1 + tol
                detail.append(f"copy {pa:.1f}%->{pb:.1f}%")
            else:
                bad_copy = False
            if sa and sb:
                bad_peer &= sa / sb > 1 + tol
                detail.append(f"cub {sa:.3f}x->{sb:.3f}x")
            else:
                bad_peer = False
        if not seen:
            continue
        compared += 1
        if bad_copy or bad_peer:
            worse.append((k, "; ".join(detail)))
    for k, d in worse:
        print("worse:", "/".join(x for x in k if x), d)
    ratios.sort()
    med = ratios[len(ratios) // 2] if ratios else float("nan")
    print(f"ab_compare: {compared} tally rows compared over {len(pairs)} pair(s); "
          f"{len(worse)} worse than {tol:.0%} in every pair; median time ratio B/A {med:.4f}")

if __name__ == "__main__":
    main(sys.argv)
