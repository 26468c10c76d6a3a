#!/usr/bin/env python3
"""PyTorch's cumsum on the shapes of tally-bench's segmented table, beside a copy of the same
tensor: a peer outside the bench's process.

    python3 scripts/torch_cumsum.py [--csv results/torch_cumsum.csv] [--reps 21]

Measures, on CUDA device 0, for int32 and float32:
  - torch.cumsum along dim 0 and dim 1 of the 2-d shapes 2^20 x 32, 32 x 2^20,
    16384 x 4096, 2^20 x 2 and 2 x 2^20 (the batched rows of tally-bench, whose axis 0 / 1
    are dim 0 / 1 of a contiguous row-major tensor);
  - torch.cumsum of 1-d tensors of 2^26 and 2^28 elements;
  - for every tensor, a device-to-device copy of it (y.copy_(x) into a preallocated
    tensor), the reference of pct_of_copy (copy time / cumsum time, as tally-bench's %copy).
cumsum runs with dtype= the input's type (PyTorch would otherwise widen int32 to int64) and
out= a preallocated tensor, so that only the kernel is timed, as in tally-bench.

Method as tally-bench's: CUDA events around each call, warm-up calls first, the median of
--reps samples (default 21). Before each sample a short GPU sleep (torch.cuda._sleep, where
it exists) holds the stream so that the launch is queued when the start event is reached.
Inputs are random integers in [-64, 64] (exact float sums); every cumsum is checked once
against a float64 cumsum of the same tensor (check column: ok / FAILED / -).

Output: CSV lines on stdout (and in the --csv file); progress and errors on stderr.
Without PyTorch or without a CUDA device it says so and exits with status 0.
"""

import argparse
import statistics
import sys

SHAPES = [(1 << 20, 32), (32, 1 << 20), (16384, 4096), (1 << 20, 2), (2, 1 << 20)]
LENGTHS_1D = [1 << 26, 1 << 28]
HEADER = ("impl,dtype,shape,dim,n,bytes,reps,median_s,min_s,max_s,gbps,copy_median_s,"
          "pct_of_copy,check,device,torch")


def size_text(n):
    """2^k for powers of two from 2^16 up (as tally-bench's variants), else the number."""
    if n >= (1 << 16) and n & (n - 1) == 0:
        return f"2^{n.bit_length() - 1}"
    return str(n)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--csv", help="also write the CSV lines to this file")
    parser.add_argument("--reps", type=int, default=21, help="timed samples per row (default 21)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed calls first (default 3)")
    parser.add_argument("--no-check", action="store_true", help="skip the float64 check")
    parser.add_argument("--max-log2", type=int, default=28,
                        help="skip tensors of more than 2^K elements (default 28)")
    args = parser.parse_args()

    try:
        import torch
    except ImportError as e:
        print(f"torch_cumsum.py: PyTorch is not available ({e}); nothing measured", file=sys.stderr)
        return 0
    if not torch.cuda.is_available():
        print("torch_cumsum.py: PyTorch has no usable CUDA device "
              f"(torch {torch.__version__}, built for CUDA {torch.version.cuda}); nothing measured",
              file=sys.stderr)
        return 0

    device = torch.device("cuda", 0)
    device_name = torch.cuda.get_device_name(device).replace(",", " ")
    stream = torch.cuda.Stream(device)
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)
    # ~30 us of GPU sleep before each sample (cycles at the SM clock; 2 GHz is an upper bound)
    sleep = getattr(torch.cuda, "_sleep", None)
    sleep_cycles = 60_000

    def measure(call):
        """Median, min and max seconds of `call` over args.reps samples, after warm-up."""
        torch.cuda.synchronize(device)  # the inputs were written on the default stream
        with torch.cuda.stream(stream):
            for _ in range(max(args.warmup, 1)):
                call()
            stream.synchronize()
            samples = []
            for _ in range(args.reps):
                if sleep is not None:
                    sleep(sleep_cycles)
                start.record(stream)
                call()
                stop.record(stream)
                stop.synchronize()
                samples.append(start.elapsed_time(stop) * 1e-3)
        return statistics.median(samples), min(samples), max(samples)

    out_file = open(args.csv, "w") if args.csv else None

    def emit(line):
        print(line, flush=True)
        if out_file is not None:
            out_file.write(line + "\n")
            out_file.flush()

    emit(HEADER)
    cases = []  # (shape, dim)
    for rows, cols in SHAPES:
        cases += [((rows, cols), 0), ((rows, cols), 1)]
    cases += [((n,), 0) for n in LENGTHS_1D]
    failures = 0
    for dtype_name, dtype in (("int32", torch.int32), ("float32", torch.float32)):
        copies = {}  # shape -> copy median (seconds)
        for shape, dim in cases:
            n = 1
            for extent in shape:
                n *= extent
            if n > (1 << args.max_log2):
                continue
            shape_text = "x".join(size_text(e) for e in shape)
            x = y = copy_out = None
            try:
                generator = torch.Generator(device=device)
                generator.manual_seed(1)
                x = torch.randint(-64, 65, shape, device=device, dtype=torch.int32,
                                  generator=generator).to(dtype)
                y = torch.empty_like(x)
                bytes_moved = 2 * n * x.element_size()
                if shape not in copies:
                    copy_out = torch.empty_like(x)
                    median, low, high = measure(lambda: copy_out.copy_(x))
                    copies[shape] = median
                    emit(f"Tensor.copy_,{dtype_name},{shape_text},-,{n},{bytes_moved},{args.reps},"
                         f"{median:.6g},{low:.6g},{high:.6g},{bytes_moved / median / 1e9:.6g},"
                         f"{median:.6g},100,-,{device_name},{torch.__version__}")
                    del copy_out
                    copy_out = None
                median, low, high = measure(lambda: torch.cumsum(x, dim, dtype=dtype, out=y))
                check = "-"
                if not args.no_check:
                    reference = torch.cumsum(x.to(torch.float64), dim)
                    check = "ok" if torch.equal(y.to(torch.float64), reference) else "FAILED"
                    failures += check == "FAILED"
                    del reference
                copy_s = copies[shape]
                emit(f"torch.cumsum,{dtype_name},{shape_text},{dim},{n},{bytes_moved},{args.reps},"
                     f"{median:.6g},{low:.6g},{high:.6g},{bytes_moved / median / 1e9:.6g},"
                     f"{copy_s:.6g},{100 * copy_s / median:.4g},{check},{device_name},"
                     f"{torch.__version__}")
            except (RuntimeError, MemoryError) as e:  # out of memory, a CUDA error
                print(f"torch_cumsum.py: {dtype_name} {shape_text} dim {dim} skipped: {e}",
                      file=sys.stderr)
            finally:
                del x, y, copy_out
                torch.cuda.empty_cache()
    if out_file is not None:
        out_file.close()
        print(f"torch_cumsum.py: wrote {args.csv}", file=sys.stderr)
    if failures:
        print(f"torch_cumsum.py: {failures} cumsum results differ from the float64 reference",
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
