#!/usr/bin/env python3
"""Where the open issues' performance targets stand, from tally-bench CSVs of one GPU.

    scripts/targets.py results/bench.csv [more.csv ...]

Reads the GPU rows of one or more CSVs written by `tally-bench --csv` (a quick run, a
sweep, the segmented table, the select table, the applications table: their rows are
pooled), and prints for each target of issues 4, 5, 6, 66 and 68 which rows it covers, the
worst of them, and whether every one meets it. A target with no rows in the CSVs says so;
nothing is inferred from other sizes.

The targets are the issues' own words, written down once here (TARGETS below):
  4  single-pass scans (`tally/automatic`, inclusive and exclusive, int32/float/int64/double
     sums and the int32 maximum): at n = 2^28 (2^27 for 8-byte types) at least 95% of the
     copy, and at least 1.25x CUB for 4-byte types; at n <= 2^16 at most 1.2x the copy's
     time; never slower than CUB from 2^10 to 2^30 (also with caller storage,
     `tally/automatic+storage`); the deterministic mode at least 90% of the copy at 2^28
     (float; double at 2^27).
  5  `tally::reduce_into/automatic`, int32 and float sums: at 2^28 at least CUB's speed; at
     n <= 2^20 at most 1.2x the time of a copy of the same n; never slower than CUB from
     2^10 to 2^30.
  6  int32 and float sums at n = 2^26 and 2^28: scans by offsets and by flags at most 1.25x
     the copy of the values, every segment length; by keys at most 1.4x the copy and at
     least 1.5x CUB's InclusiveSumByKey; batched scans of the five shapes along either
     axis at most 1.25x the copy of the values.
  66 the selection family (`--operations select`: tally::copy_if, copy_flagged, partition,
     unique, run_length_encode, reduce_by_key): at 2^28 at least 85% of the bytes-moved
     floor (the row's `copy (same bytes)`: a copy of the bytes it reads and writes); at
     least 1.4x CUB at 2^28 for select_if 50%, partition and run_length_encode; at n <= 2^20
     at most 1.3x the floor's time; never slower than CUB from 2^10 to 2^30.
  68 the applications (`--operations applications`): tally::linear_recurrence (1-d) and
     tally::linear_recurrence_batched (along the last and the first axis), float at 2^26
     elements: at most 1.3x the time of the bytes-moved floor (the case's `copy (same
     bytes)`: a copy of the bytes it reads and writes, a and b read and x written).

"x the copy" is the row's median over the copy's median of the same type and n in the
same CSV (for a reduce, a copy of the same n elements, as issue 5 says); "x CUB" is the
row's `speedup_vs_peer`. A row whose check failed counts as missing the target.

Exit status: 0 when the CSVs could be read (whatever the verdicts), 2 otherwise.
"""
import argparse
import csv
import os
import sys
from dataclasses import dataclass, field

EIGHT_BYTE = ("int64", "double")


def log2(n):
    return n.bit_length() - 1 if n > 0 and n & (n - 1) == 0 else None


def size_text(n):
    k = log2(n)
    return f"2^{k}" if k is not None else str(n)


@dataclass
class Target:
    issue: int
    text: str
    select: object  # row -> bool
    value: object   # (row, copies) -> float, or None when the row cannot be judged
    unit: str       # "x copy", "% copy", "x CUB"
    limit: float
    at_most: bool   # True: value <= limit meets it; False: value >= limit
    rows: list = field(default_factory=list)


def copy_ratio(r, copies):
    c = copies.get((r["_file"], r["type"], int(r["n"])))
    if c is None:
        return None
    return float(r["median_s"]) / float(c["median_s"])


def pct_copy(r, copies):
    x = copy_ratio(r, copies)
    return None if x is None else 100.0 / x


def floor_ratio(r, copies):
    """A select or applications row's time over its case's floor copy: the `copy (same
    bytes)` row written just before the case's rows (report() links them: `_floor`)."""
    c = r.get("_floor")
    if c is None:
        return None
    return float(r["median_s"]) / float(c["median_s"])


def pct_floor(r, copies):
    x = floor_ratio(r, copies)
    return None if x is None else 100.0 / x


def vs_cub(r, copies):
    return float(r["speedup_vs_peer"]) if r["speedup_vs_peer"] else None


def plain_scan(impl):
    def select(r):
        return (r["impl"] == impl and r["operation"] in ("inclusive_scan", "exclusive_scan")
                and r["type"] in ("int32", "float", "int64", "double") and r["op"] in ("plus", "max"))
    return select


def top_size(r):
    return int(r["n"]) == (1 << 27 if r["type"] in EIGHT_BYTE else 1 << 28)


def reduce_rows(r):
    return (r["impl"] == "tally::reduce_into/automatic" and r["operation"] == "reduce"
            and r["type"] in ("int32", "float") and r["op"] == "plus")


def issue6(impls, operation):
    def select(r):
        return (r["operation"] == operation and r["impl"] in impls and r["type"] in ("int32", "float")
                and (operation == "batched_scan" or int(r["n"]) in (1 << 26, 1 << 28)))
    return select


def in_range(r, lo, hi):
    return (1 << lo) <= int(r["n"]) <= (1 << hi)


SELECT_OPERATIONS = ("copy_if", "partition", "unique", "run_length_encode", "reduce_by_key")


# The applications table (gpu_bench_algorithms.cu) writes a floor copy before each case, as
# the select table does.
APPLICATION_OPERATIONS = ("linear_recurrence", "line_of_sight", "lexicographic_compare", "spmv_csr",
                          "allocate", "polynomial_evaluate")
FLOORED_OPERATIONS = SELECT_OPERATIONS + APPLICATION_OPERATIONS


def recurrence_rows(r):
    """tally's linear recurrences, 1-d and batched (not the deterministic rows), float, 2^26."""
    return (r["operation"] == "linear_recurrence" and r["type"] == "float" and int(r["n"]) == 1 << 26
            and r["impl"] in ("tally::linear_recurrence", "tally::linear_recurrence_batched"))


def select_rows(r):
    return r["operation"] in SELECT_OPERATIONS and r["impl"].startswith("tally::")


def select_headline(r):
    """select_if 50%, partition and run_length_encode: the cases issue 66 wants 1.4x CUB on."""
    return select_rows(r) and (r.get("variant") in ("select_if 50%", "partition 50%")
                               or r["operation"] == "run_length_encode")


auto = plain_scan("tally/automatic")
storage = plain_scan("tally/automatic+storage")
deterministic = plain_scan("tally/decoupled_lookback/deterministic")
OFFSETS_FLAGS = ("tally::inclusive_segmented_scan", "tally::inclusive_scan_by_flags")
BATCHED_SHAPES = {f"{s} axis {a}" for s in ("2^20x32", "32x2^20", "16384x4096", "2^20x2", "2x2^20")
                  for a in (0, 1)}

TARGETS = [
    Target(4, "n = 2^28 (2^27 for 8-byte types): at least 95% of the copy",
           lambda r: auto(r) and top_size(r), pct_copy, "% copy", 95.0, False),
    Target(4, "n = 2^28, 4-byte types: at least 1.25x CUB",
           lambda r: auto(r) and top_size(r) and r["type"] not in EIGHT_BYTE, vs_cub, "x CUB", 1.25, False),
    Target(4, "n <= 2^16: at most 1.2x the copy's time",
           lambda r: auto(r) and int(r["n"]) <= 1 << 16, copy_ratio, "x copy", 1.2, True),
    Target(4, "every n from 2^10 to 2^30: never slower than CUB",
           lambda r: auto(r) and in_range(r, 10, 30), vs_cub, "x CUB", 1.0, False),
    Target(4, "the same, with caller storage (tally/automatic+storage)",
           lambda r: storage(r) and in_range(r, 10, 30), vs_cub, "x CUB", 1.0, False),
    Target(4, "deterministic mode: at least 90% of the copy at 2^28 (float; double at 2^27)",
           lambda r: deterministic(r) and top_size(r) and r["type"] in ("float", "double"),
           pct_copy, "% copy", 90.0, False),
    Target(5, "reduce_into, n = 2^28: at least CUB's speed",
           lambda r: reduce_rows(r) and int(r["n"]) == 1 << 28, vs_cub, "x CUB", 1.0, False),
    Target(5, "reduce_into, n <= 2^20: at most 1.2x the time of a copy of the same n",
           lambda r: reduce_rows(r) and int(r["n"]) <= 1 << 20, copy_ratio, "x copy", 1.2, True),
    Target(5, "reduce_into, every n from 2^10 to 2^30: never slower than CUB",
           lambda r: reduce_rows(r) and in_range(r, 10, 30), vs_cub, "x CUB", 1.0, False),
    Target(6, "by offsets or by flags: at most 1.25x the copy of the values",
           issue6(OFFSETS_FLAGS, "segmented_scan"), copy_ratio, "x copy", 1.25, True),
    Target(6, "by keys: at most 1.4x the copy",
           issue6(("tally::inclusive_scan_by_key",), "segmented_scan"), copy_ratio, "x copy", 1.4, True),
    Target(6, "by keys: at least 1.5x CUB InclusiveSumByKey",
           issue6(("tally::inclusive_scan_by_key",), "segmented_scan"), vs_cub, "x CUB", 1.5, False),
    Target(6, "batched, the five shapes along either axis: at most 1.25x the copy",
           lambda r: issue6(("tally::inclusive_scan_batched",), "batched_scan")(r)
           and r.get("variant", "") in BATCHED_SHAPES, copy_ratio, "x copy", 1.25, True),
    Target(66, "selection, n = 2^28: at least 85% of the bytes-moved floor",
           lambda r: select_rows(r) and int(r["n"]) == 1 << 28, pct_floor, "% floor", 85.0, False),
    Target(66, "select_if 50%, partition, run_length_encode at 2^28: at least 1.4x CUB",
           lambda r: select_headline(r) and int(r["n"]) == 1 << 28, vs_cub, "x CUB", 1.4, False),
    Target(66, "selection, n <= 2^20: at most 1.3x the floor's time",
           lambda r: select_rows(r) and int(r["n"]) <= 1 << 20, floor_ratio, "x floor", 1.3, True),
    Target(66, "selection, every n from 2^10 to 2^30: never slower than CUB",
           lambda r: select_rows(r) and in_range(r, 10, 30), vs_cub, "x CUB", 1.0, False),
    Target(68, "linear_recurrence, float at 2^26 (1-d, along the last and the first axis): "
               "at most 1.3x the floor's time",
           recurrence_rows, floor_ratio, "x floor", 1.3, True),
]


FORMS = {"tally::inclusive_segmented_scan": "by offsets", "tally::inclusive_scan_by_flags": "by flags",
         "tally::inclusive_scan_by_key": "by keys", "tally::inclusive_scan_batched": "batched"}


def segments(r):
    """The number of segments of a segmented row's case, from its `variant` ("len 32", "len
    2^16", "len n", "len U[1,2000]": random lengths, mean (1 + 2000) / 2); None if unknown."""
    n = int(r["n"])
    v = (r.get("variant") or "").removeprefix("len ")
    if v == "n":
        return 1
    if v.startswith("U[1,") and v.endswith("]"):
        return max(1, round(2 * n / (1 + int(v[4:-1]))))
    if v.startswith("2^") and v[2:].isdigit():
        return max(1, n >> int(v[2:]))
    return max(1, n // int(v)) if v.isdigit() else None


def bandwidth_floor(r):
    """The least x copy a segmented scan row can take by the bytes it must move: the values
    read and written (the copy's bytes) plus what describes the segments: int32 offsets (one
    a segment, and one more), uint8 flags or int32 keys (one a value). None for other rows."""
    value_bytes = 8 if r["type"] in EIGHT_BYTE else 4
    n = int(r["n"])
    form = FORMS.get(r["impl"])
    if form == "by offsets":
        count = segments(r)
        extra = None if count is None else 4 * (count + 1)
    elif form == "by flags":
        extra = n
    elif form == "by keys":
        extra = 4 * n
    else:
        return None
    return None if extra is None else 1 + extra / (2 * n * value_bytes)


def case(r, impl=None):
    return (r["_file"], r["operation"], r["type"], r["op"], r["n"], r.get("variant") or "", impl or r["impl"])


def floor_note(t, r, copies, rows_by_case):
    """For a segmented row that misses t: whether the bytes it must move already rule the
    target out. x copy: the floor itself. x CUB: the most a row at its floor could be
    against the peer measured beside it (the peer's time over the floor's)."""
    floor = bandwidth_floor(r)
    if floor is None:
        return ""
    if t.unit == "x copy" and floor > t.limit:
        return f"  (its bytes' floor: {floor:.3f}x, above the target)"
    if t.unit == "x CUB":
        peer = rows_by_case.get(case(r, r["peer"]))
        c = copies.get((r["_file"], r["type"], int(r["n"])))
        if peer and c:
            best = float(peer["median_s"]) / (floor * float(c["median_s"]))
            if best < t.limit:
                return f"  (at its bytes' floor, {floor:.3f}x the copy, it would be {best:.3f}x CUB)"
    return ""


def where(r, files):
    """A row in a few words: type, operator, operation or form, n, case; the CSV's name when
    several were read."""
    op = {"inclusive_scan": "incl", "exclusive_scan": "excl"}.get(r["operation"], r["operation"])
    parts = [r["type"], r["op"], FORMS.get(r["impl"], op), size_text(int(r["n"]))]
    if r.get("variant"):
        parts.append(f"[{r['variant']}]")
    if r["impl"].endswith("+storage"):
        parts.append("+storage")
    if len(files) > 1:
        parts.append(f"({files[r['_file']]})")
    return " ".join(parts)


def judge(t, copies):
    """(value, meets) for each of t's rows, the worst first."""
    judged = []
    for r in t.rows:
        v = t.value(r, copies)
        ok = v is not None and r["check"] in ("ok", "OK", "") and (v <= t.limit if t.at_most else v >= t.limit)
        judged.append((v, ok, r))
    def badness(item):
        v = item[0]
        if v is None:
            return float("inf")
        return v if t.at_most else -v
    judged.sort(key=badness, reverse=True)
    return judged


def fmt(v, unit):
    if v is None:
        return "?"
    return f"{v:.1f}%" if unit in ("% copy", "% floor") else f"{v:.3f}x"


def report(rows, files, out, show=8):
    """Prints every target's verdict; returns {issue: [verdict word per target]}. `rows` carry
    `_file`, the index of their CSV in `files`: a row is compared with the copy of its own
    run, never with another CSV's."""
    devices = sorted({r["device"] for r in rows})
    copies = {}
    for r in rows:
        if r["operation"] == "copy" and r["impl"] == "cudaMemcpyAsync":
            copies.setdefault((r["_file"], r["type"], int(r["n"])), r)
    # the select and applications tables write each case's floor copy, then its peer and
    # tally rows (cases of one variant, such as unique and run_length_encode on the same
    # runs, have floors of their own): each such row takes the latest floor of its file,
    # type, n and variant
    floors = {}
    for r in rows:
        key = (r["_file"], r["type"], r["n"], r.get("variant") or "")
        if r["operation"] == "copy" and r["impl"] == "copy (same bytes)":
            floors[key] = r
        elif r["operation"] in FLOORED_OPERATIONS and key in floors:
            r["_floor"] = floors[key]
    rows_by_case = {case(r): r for r in rows}
    out.write(f"device: {', '.join(devices) or '(no GPU rows)'}\n")
    summary = {}
    for t in TARGETS:
        t.rows = [r for r in rows if t.select(r)]
        judged = judge(t, copies)
        missed = [j for j in judged if not j[1]]
        if not judged:
            verdict = "no rows"
        elif missed:
            verdict = f"MISSED by {len(missed)} of {len(judged)} rows"
        else:
            verdict = f"met by {len(judged)} of {len(judged)} rows"
        cases = len({(r["operation"], r["type"], r["op"], r["n"], r["impl"], r.get("variant", "")) for r in t.rows})
        if cases != len(judged):
            verdict += f" ({cases} cases, some measured in more than one CSV)"
        summary.setdefault(t.issue, []).append(verdict.split()[0])
        limit = ("<= " if t.at_most else ">= ") + fmt(t.limit, t.unit)
        out.write(f"\nissue {t.issue}: {t.text} [{t.unit} {limit}]\n  {verdict}")
        if judged:
            v, ok, r = judged[0]
            out.write(f"; worst {fmt(v, t.unit)} ({where(r, files)})")
        out.write("\n")
        for v, ok, r in missed[:show]:
            out.write(f"    {fmt(v, t.unit):>9}  {where(r, files)}{floor_note(t, r, copies, rows_by_case)}\n")
        if len(missed) > show:
            out.write(f"    ... and {len(missed) - show} more\n")
    out.write("\n")
    for issue, verdicts in summary.items():
        out.write(f"issue {issue}: {verdicts.count('met')} met, {verdicts.count('MISSED')} missed, "
                  f"{verdicts.count('no')} without rows, of {len(verdicts)} targets\n")
    return summary


def read(paths):
    """The GPU rows of every CSV, each tagged with its file's index (`_file`)."""
    rows = []
    for i, p in enumerate(paths):
        with open(p, newline="") as f:
            for r in csv.DictReader(f):
                if "CPU" in r["device"] or r["device"].startswith("cpu"):
                    continue
                r["_file"] = i
                rows.append(r)
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("csv", nargs="+", help="tally-bench --csv files of one GPU")
    ap.add_argument("--show", type=int, default=8, help="missed rows listed per target")
    args = ap.parse_args(argv)
    try:
        rows = read(args.csv)
    except (OSError, KeyError, csv.Error) as e:
        print(f"targets.py: cannot read {args.csv}: {e}", file=sys.stderr)
        return 2
    try:
        report(rows, [p.rsplit("/", 1)[-1] for p in args.csv], sys.stdout, args.show)
        sys.stdout.flush()
    except BrokenPipeError:  # the reader stopped early (`| head`): not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


if __name__ == "__main__":
    sys.exit(main())
