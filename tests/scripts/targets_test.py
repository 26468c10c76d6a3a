#!/usr/bin/env python3
"""Tests of scripts/targets.py (the issues' targets from tally-bench CSVs), on small CSVs
written here: which rows a target takes, the ratios it computes, its verdicts."""
import contextlib
import csv
import io
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import targets  # noqa: E402

FIELDS = ["device", "operation", "type", "op", "n", "bytes", "impl", "threads", "reps", "median_s",
          "min_s", "max_s", "gbps", "pct_of_copy", "copy_ref", "peer", "speedup_vs_peer", "vs_tbb",
          "vs_par", "check", "note", "variant"]
GPU = "NVIDIA H100 80GB HBM3"


def row(operation, type_, n, impl, median_us, vs_peer="", op="plus", check="ok", variant="",
        device=GPU, peer=""):
    r = dict.fromkeys(FIELDS, "")
    r.update(device=device, operation=operation, type=type_, op=op, n=str(n), impl=impl,
             median_s=str(median_us * 1e-6), speedup_vs_peer=str(vs_peer), check=check,
             variant=variant, peer=peer)
    return r


def copy(type_, n, median_us):
    return row("copy", type_, n, "cudaMemcpyAsync", median_us, op="-")


class TargetsTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def write(self, name, rows):
        path = os.path.join(self.dir.name, name)
        with open(path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=FIELDS)
            w.writeheader()
            w.writerows(rows)
        return path

    def run_report(self, *paths):
        out = io.StringIO()
        summary = targets.report(targets.read(list(paths)), [os.path.basename(p) for p in paths], out)
        return summary, out.getvalue()

    def section(self, text, title):
        """The lines of the target whose description starts with `title`."""
        start = text.index(title)
        end = text.find("\nissue ", start)
        return text[start:end if end >= 0 else len(text)]

    def test_top_size_and_cub_ratio(self):
        k28, k27 = 1 << 28, 1 << 27
        path = self.write("a.csv", [
            copy("int32", k28, 700.0), copy("double", k27, 700.0),
            row("inclusive_scan", "int32", k28, "tally/automatic", 720.0, 1.30),   # 97.2%, 1.30x
            row("exclusive_scan", "double", k27, "tally/automatic", 760.0, 1.10),  # 92.1%: misses 95%
            row("inclusive_scan", "int32", k27, "tally/automatic", 1.0, 9.0),      # not the top size
        ])
        summary, text = self.run_report(path)
        top = self.section(text, "n = 2^28 (2^27 for 8-byte types)")
        self.assertIn("MISSED by 1 of 2 rows", top)
        self.assertIn("92.1%", top)
        self.assertIn("double plus excl 2^27", top)
        cub = self.section(text, "n = 2^28, 4-byte types")
        self.assertIn("met by 1 of 1 rows", cub)  # the 8-byte row is not in this target
        self.assertEqual(summary[4][:2], ["MISSED", "met"])

    def test_small_n_uses_the_copy_of_its_own_csv(self):
        n = 1 << 16
        first = self.write("first.csv", [copy("int32", n, 3.0),
                                          row("inclusive_scan", "int32", n, "tally/automatic", 3.5, 2.0)])
        second = self.write("second.csv", [copy("int32", n, 4.0),
                                           row("inclusive_scan", "int32", n, "tally/automatic", 4.4, 2.0)])
        _, text = self.run_report(first, second)
        small = self.section(text, "n <= 2^16")
        # 3.5 / 3.0 = 1.167 and 4.4 / 4.0 = 1.1: both met; against the other file's copy the
        # first would be 0.875 and the second 1.467
        self.assertIn("met by 2 of 2 rows", small)
        self.assertIn("1.167x", small)

    def test_failed_check_and_missing_copy_miss(self):
        n = 1 << 12
        path = self.write("a.csv", [
            copy("float", n, 3.0),
            row("inclusive_scan", "float", n, "tally/automatic", 3.1, 2.0, check="FAILED"),
            row("inclusive_scan", "int32", n, "tally/automatic", 3.1, 2.0),  # no int32 copy
        ])
        _, text = self.run_report(path)
        self.assertIn("MISSED by 2 of 2 rows", self.section(text, "n <= 2^16"))

    def test_no_rows_and_cpu_rows_ignored(self):
        path = self.write("a.csv", [row("inclusive_scan", "int32", 1 << 20, "tally::cpu::inclusive_scan",
                                        10.0, device="CPU: 2 threads")])
        summary, text = self.run_report(path)
        self.assertIn("device: (no GPU rows)", text)
        self.assertTrue(all(v == "no" for verdicts in summary.values() for v in verdicts))

    def test_reduce_compares_with_a_copy_of_the_same_n(self):
        n = 1 << 20
        path = self.write("a.csv", [copy("float", n, 5.0), copy("int32", n, 5.0),
                                    row("reduce", "float", n, "tally::reduce_into/automatic", 6.5, 1.3),
                                    row("reduce", "int32", n, "tally::reduce_into/automatic", 5.5, 1.3),
                                    row("reduce", "int32", n, "tally::reduce (value)", 50.0, 0.1)])
        _, text = self.run_report(path)
        small = self.section(text, "reduce_into, n <= 2^20")
        self.assertIn("MISSED by 1 of 2 rows", small)
        self.assertIn("1.300x  float plus reduce 2^20", small)

    def test_select_rows_take_the_floor_written_before_them(self):
        # two cases of one variant (unique, run_length_encode on the same runs), each with
        # its own floor copy written just before its CUB and tally rows
        n, k28 = 1 << 20, 1 << 28
        floor = lambda us, variant: row("copy", "uint32", n, "copy (same bytes)", us, op="-", variant=variant)
        path = self.write("a.csv", [
            floor(4.0, "runs U[1,7]"),
            row("unique", "uint32", n, "cub::DeviceSelect::Unique", 9.0, variant="runs U[1,7]"),
            row("unique", "uint32", n, "tally::unique", 5.0, 1.8, op="equal", variant="runs U[1,7]"),
            floor(6.0, "runs U[1,7]"),
            row("run_length_encode", "uint32", n, "tally::run_length_encode", 7.2, 1.4, op="equal",
                variant="runs U[1,7]"),
            row("copy", "uint32", k28, "copy (same bytes)", 400.0, op="-", variant="select_if 50%"),
            row("copy_if", "uint32", k28, "tally::copy_if", 500.0, 1.5, op="pred", variant="select_if 50%"),
        ])
        summary, text = self.run_report(path)
        small = self.section(text, "selection, n <= 2^20")
        # 5.0 / 4.0 = 1.25 (met), 7.2 / 6.0 = 1.2 (met; against unique's floor it would be 1.8)
        self.assertIn("met by 2 of 2 rows", small)
        top = self.section(text, "selection, n = 2^28")
        self.assertIn("MISSED by 1 of 1 rows", top)  # 400 / 500 = 80% of the floor
        self.assertIn("80.0%", top)
        self.assertIn("met by 1 of 1 rows", self.section(text, "select_if 50%, partition"))
        self.assertEqual(summary[66], ["MISSED", "met", "met", "met"])

    def test_linear_recurrence_takes_its_case_floor(self):
        # the applications table: each case's floor copy, then its CUB and tally rows; the
        # three cases share type and n, so each row must take the floor of its own variant
        n = 1 << 26
        floor = lambda us, variant: row("copy", "float", n, "copy (same bytes)", us, op="-", variant=variant)
        lr = lambda impl, us, variant, n=n: row("linear_recurrence", "float", n, impl, us, 1.2, op="affine",
                                                variant=variant)
        path = self.write("a.csv", [
            floor(400.0, "1-d"),
            lr("cub::DeviceScan::InclusiveScan", 900.0, "1-d"),
            lr("tally::linear_recurrence", 480.0, "1-d"),                          # 1.2x: met
            lr("tally::linear_recurrence/deterministic", 900.0, "1-d"),            # not judged
            floor(300.0, "64x16x65536 axis 2"),
            lr("tally::linear_recurrence_batched", 420.0, "64x16x65536 axis 2"),   # 1.4x: missed
            floor(500.0, "65536x1024 axis 0"),
            lr("tally::linear_recurrence_batched", 600.0, "65536x1024 axis 0"),    # 1.2x: met
            lr("tally::linear_recurrence", 9.0, "1-d", n=1 << 20),                 # not at 2^26
            row("spmv_csr", "float", 1 << 22, "tally::spmv_csr", 100.0, 1.5, variant="16/row U[0,32]"),
        ])
        summary, text = self.run_report(path)
        target = self.section(text, "linear_recurrence, float at 2^26")
        self.assertIn("MISSED by 1 of 3 rows", target)
        self.assertIn("1.400x  float affine linear_recurrence 2^26 [64x16x65536 axis 2]", target)
        self.assertEqual(summary[68], ["MISSED"])

    def test_linear_recurrence_without_floor_misses(self):
        n = 1 << 26
        path = self.write("a.csv", [
            copy("float", n, 400.0),  # a plain copy is not the case's floor
            row("linear_recurrence", "float", n, "tally::linear_recurrence", 420.0, 1.2, op="affine",
                variant="1-d"),
        ])
        summary, text = self.run_report(path)
        self.assertIn("MISSED by 1 of 1 rows", self.section(text, "linear_recurrence, float at 2^26"))
        self.assertEqual(summary[68], ["MISSED"])

    def test_segmented_floors(self):
        n = 1 << 26
        path = self.write("a.csv", [
            copy("int32", n, 180.0),
            row("segmented_scan", "int32", n, "tally::inclusive_segmented_scan", 290.0, 1.06, variant="len 1"),
            row("segmented_scan", "int32", n, "tally::inclusive_segmented_scan", 230.0, 1.3, variant="len 4"),
            row("segmented_scan", "int32", n, "tally::inclusive_scan_by_flags", 210.0, 1.5, variant="len 4"),
            row("segmented_scan", "int32", n, "cub::DeviceScan::InclusiveSumByKey", 310.5, 1.0, variant="len 32"),
            row("segmented_scan", "int32", n, "tally::inclusive_scan_by_key", 285.0, 1.09, variant="len 32",
                peer="cub::DeviceScan::InclusiveSumByKey"),
            row("segmented_scan", "int32", 1 << 20, "tally::inclusive_scan_by_key", 9.0, 9.0, variant="len 32"),
        ])
        _, text = self.run_report(path)
        offsets = self.section(text, "by offsets or by flags")
        self.assertIn("MISSED by 2 of 3 rows", offsets)
        # len 1: n + 1 int32 offsets beside 2n int32 values: 1.5x; len 4: 1.125x (below 1.25x)
        self.assertIn("by offsets 2^26 [len 1]  (its bytes' floor: 1.500x, above the target)", offsets)
        self.assertRegex(offsets, r"1\.278x  int32 plus by offsets 2\^26 \[len 4\]\n")
        keys = self.section(text, "by keys: at most 1.4x")
        self.assertIn("MISSED by 1 of 1 rows", keys)  # the 2^20 row is not at 2^26 or 2^28
        self.assertIn("its bytes' floor: 1.500x", keys)
        # CUB at 310.5 us, the floor at 1.5 x 180 = 270 us: at most 1.15x CUB, under 1.5x
        self.assertIn("at its bytes' floor, 1.500x the copy, it would be 1.150x CUB",
                      self.section(text, "by keys: at least 1.5x CUB"))

    def test_segmented_eight_byte_rows(self):
        n = 1 << 26
        # the bytes' floor counts 8-byte values: offsets of one-element segments add a quarter
        # of the copy's bytes, flags a sixteenth, int32 keys a quarter
        def floor(impl, type_, variant="len 1"):
            return targets.bandwidth_floor({"n": str(n), "impl": impl, "type": type_, "variant": variant})
        self.assertAlmostEqual(floor("tally::inclusive_segmented_scan", "int64"), 1 + 4 * (n + 1) / (16 * n))
        self.assertAlmostEqual(floor("tally::inclusive_scan_by_flags", "double"), 1.0625)
        self.assertAlmostEqual(floor("tally::inclusive_scan_by_key", "int64"), 1.25)
        self.assertAlmostEqual(floor("tally::inclusive_scan_by_key", "float"), 1.5)
        # issue 6's targets are for int32 and float: 8-byte rows are not judged
        path = self.write("a.csv", [
            copy("int64", n, 360.0),
            row("segmented_scan", "int64", n, "tally::inclusive_segmented_scan", 500.0, 1.0, variant="len 1"),
            row("segmented_scan", "double", n, "tally::inclusive_scan_by_flags", 400.0, 1.3, variant="len 4"),
        ])
        summary, text = self.run_report(path)
        self.assertIn("no rows", self.section(text, "by offsets or by flags"))
        self.assertEqual(summary[6], ["no"] * 4)

    def test_segments_of_a_case(self):
        n = 1 << 26
        for variant, want in (("len 1", n), ("len 2^16", 1024), ("len n", 1), ("len U[1,2000]", round(2 * n / 2001))):
            self.assertEqual(targets.segments({"n": str(n), "variant": variant}), want, variant)

    def test_command_line(self):
        path = self.write("a.csv", [copy("int32", 1 << 28, 700.0)])
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            self.assertEqual(targets.main([path]), 0)
            self.assertEqual(targets.main([os.path.join(self.dir.name, "missing.csv")]), 2)
        self.assertIn("issue 4: 0 met, 0 missed, 6 without rows, of 6 targets", out.getvalue())
        self.assertIn("issue 68: 0 met, 0 missed, 1 without rows, of 1 targets", out.getvalue())
        self.assertIn("cannot read", err.getvalue())


if __name__ == "__main__":
    unittest.main()
