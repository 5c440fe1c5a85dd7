#!/usr/bin/env python3
"""PyTorch doing the GPU sample's work, as the peer MatVecThroughput is judged against.

Batches of `dims`-float vectors times one dims x dims float matrix on one CUDA device:

  sync             copy the batch in, multiply, copy the products out, wait; one batch at a time
  overlapped xN    the same on N CUDA streams, N batches in flight (copies in, kernels and copies
                   out of different batches overlap; needs page-locked host memory to overlap)

each with page-locked (pinned) and with pageable host buffers; the pinned rows also "+ host
copies": the batch copied into the pinned buffer from other host memory and the products out of
it, on one CPU thread, as MatVecThroughput's Java loop does (the rows without it time the device
side alone). Then the limit: the pinned copy bandwidth host to device, device to host, and both
directions at once, in GiB/s and in what it allows in records/s (a record is `dims` floats in and
`dims` floats out: 1 KiB + 1 KiB at 256).

  python3 torch_matvec.py [--dims 256] [--batches 256,4096] [--seconds 2] [--streams 2,3] [--device 0]

Prints one table. Exits 2 when PyTorch or a CUDA device is missing, saying which.
"""

import argparse
import sys
import time

GIB = 1024.0 ** 3


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dims", type=int, default=256, help="vector length and matrix side (default 256)")
    p.add_argument("--batches", default="256,4096", help="comma-separated batch sizes (default 256,4096)")
    p.add_argument("--seconds", type=float, default=2.0, help="seconds measured per row, after a warm-up (default 2)")
    p.add_argument("--streams", default="2,3", help="streams (batches in flight) of the overlapped rows (default 2,3)")
    p.add_argument("--device", type=int, default=0, help="CUDA device index (default 0)")
    p.add_argument("--copy-mib", type=int, default=256, help="MiB per copy of the bandwidth rows (default 256)")
    a = p.parse_args(argv)
    try:
        a.batches = [int(b) for b in a.batches.split(",")]
        a.streams = [int(n) for n in a.streams.split(",")]
    except ValueError:
        p.error("--batches, --streams: expected comma-separated integers such as 256,4096, not %r, %r"
                % (a.batches, a.streams))
    if a.dims < 1 or min(a.batches) < 1 or min(a.streams) < 1 or a.seconds <= 0 or a.copy_mib < 1:
        p.error("--dims, --batches, --streams and --copy-mib must be 1 or more, --seconds more than 0")
    return a


def timed_loop(torch, step, drain, seconds):
    """Runs step() for a quarter of `seconds` (warm-up), then for `seconds`; returns (records, elapsed)."""
    torch.cuda.synchronize()
    warm_end = time.perf_counter() + seconds * 0.25
    while time.perf_counter() < warm_end:
        step()
    drain()
    torch.cuda.synchronize()
    records = 0
    start = time.perf_counter()
    while True:
        records += step()
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            break
    records += drain()
    torch.cuda.synchronize()
    return records, time.perf_counter() - start


def sync_row(torch, dev, a_t, dims, batch, pinned, seconds, host_copies):
    x_host = torch.randn(batch, dims, dtype=torch.float32).pin_memory() if pinned else torch.randn(batch, dims)
    y_host = torch.empty(batch, dims, dtype=torch.float32, pin_memory=pinned)
    x_dev = torch.empty(batch, dims, dtype=torch.float32, device=dev)
    y_dev = torch.empty(batch, dims, dtype=torch.float32, device=dev)
    source, sink = torch.randn(batch, dims), torch.empty(batch, dims)

    def step():
        if host_copies:
            x_host.copy_(source)
        x_dev.copy_(x_host)
        torch.matmul(x_dev, a_t, out=y_dev)
        y_host.copy_(y_dev)  # blocking: waits for the multiply and the copy
        if host_copies:
            sink.copy_(y_host)
        return batch

    return timed_loop(torch, step, lambda: 0, seconds)


def overlapped_row(torch, dev, a_t, dims, batch, pinned, seconds, n, host_copies):
    streams = [torch.cuda.Stream(device=dev) for _ in range(n)]
    events = [torch.cuda.Event() for _ in range(n)]
    busy = [False] * n
    x_host = [torch.randn(batch, dims).pin_memory() if pinned else torch.randn(batch, dims) for _ in range(n)]
    y_host = [torch.empty(batch, dims, dtype=torch.float32, pin_memory=pinned) for _ in range(n)]
    x_dev = [torch.empty(batch, dims, dtype=torch.float32, device=dev) for _ in range(n)]
    y_dev = [torch.empty(batch, dims, dtype=torch.float32, device=dev) for _ in range(n)]
    source, sink = torch.randn(batch, dims), torch.empty(batch, dims)
    state = {"slot": 0}

    def step():
        s = state["slot"]
        state["slot"] = (s + 1) % n
        done = 0
        if busy[s]:
            events[s].synchronize()
            if host_copies:
                sink.copy_(y_host[s])
            done = batch
        if host_copies:
            x_host[s].copy_(source)
        with torch.cuda.stream(streams[s]):
            x_dev[s].copy_(x_host[s], non_blocking=True)
            torch.matmul(x_dev[s], a_t, out=y_dev[s])
            y_host[s].copy_(y_dev[s], non_blocking=True)
            events[s].record(streams[s])
        busy[s] = True
        return done

    def drain():
        done = 0
        for s in range(n):
            if busy[s]:
                events[s].synchronize()
                busy[s] = False
                done += batch
        return done

    return timed_loop(torch, step, drain, seconds)


def bandwidth(torch, dev, mib, seconds):
    """Pinned copy GiB/s: host to device, device to host, and both at once on two streams (their sum)."""
    n = mib * 1024 * 1024 // 4
    h_in = torch.empty(n, dtype=torch.float32, pin_memory=True)
    h_out = torch.empty(n, dtype=torch.float32, pin_memory=True)
    d_in = torch.empty(n, dtype=torch.float32, device=dev)
    d_out = torch.empty(n, dtype=torch.float32, device=dev)
    up, down = torch.cuda.Stream(device=dev), torch.cuda.Stream(device=dev)
    nbytes = n * 4

    def measure(copies):
        for c in copies:  # warm-up
            c()
        torch.cuda.synchronize()
        count = 0
        start = time.perf_counter()
        while time.perf_counter() - start < seconds:
            for c in copies:
                c()
            torch.cuda.synchronize()
            count += 1
        return count * nbytes * len(copies) / (time.perf_counter() - start) / GIB

    def h2d():
        with torch.cuda.stream(up):
            d_in.copy_(h_in, non_blocking=True)

    def d2h():
        with torch.cuda.stream(down):
            h_out.copy_(d_out, non_blocking=True)

    return measure([h2d]), measure([d2h]), measure([h2d, d2h])


def main(argv):
    a = parse_args(argv)
    try:
        import torch
    except ImportError as e:
        print("torch_matvec.py: PyTorch is not installed (%s)" % e, file=sys.stderr)
        return 2
    if not torch.cuda.is_available() or a.device >= torch.cuda.device_count():
        print("torch_matvec.py: no CUDA device %d (torch %s, CUDA available: %s, devices: %d)"
              % (a.device, torch.__version__, torch.cuda.is_available(), torch.cuda.device_count()), file=sys.stderr)
        return 2
    dev = torch.device("cuda", a.device)
    torch.backends.cuda.matmul.allow_tf32 = False  # plain float32, as the Java kernel
    torch.set_num_threads(1)  # host copies on one thread, as one Flink subtask does them
    gen = torch.Generator().manual_seed(42)
    a_host = torch.rand(a.dims, a.dims, generator=gen) * 2 - 1
    a_t = a_host.t().contiguous().to(dev)  # y = x @ A^T: every row of x is a vector
    record_bytes = 2 * a.dims * 4

    # One correctness check against float64 on the host, so a fast but wrong loop cannot pass unseen.
    x = torch.rand(64, a.dims, generator=gen) * 2 - 1
    y = torch.matmul(x.to(dev), a_t).cpu()
    max_error = (y.double() - x.double() @ a_host.double().t()).abs().max().item()

    rows = []
    most = max(a.streams)
    for batch in a.batches:
        for pinned, host_copies in ((True, False), (False, False), (True, True)):
            memory = ("pinned" if pinned else "pageable") + (" + host copies" if host_copies else "")
            r, t = sync_row(torch, dev, a_t, a.dims, batch, pinned, a.seconds, host_copies)
            rows.append(("sync, " + memory, batch, r / t))
            # pageable and host-copy rows only at the most streams: enough to show what they cost
            for n in a.streams if pinned and not host_copies else [most]:
                r, t = overlapped_row(torch, dev, a_t, a.dims, batch, pinned, a.seconds, n, host_copies)
                rows.append(("overlapped x%d, %s" % (n, memory), batch, r / t))
    h2d, d2h, both = bandwidth(torch, dev, a.copy_mib, min(a.seconds, 1.0))
    half = record_bytes / 2.0
    sequential_limit = 1.0 / (half / (h2d * GIB) + half / (d2h * GIB))
    overlapped_limit = both * GIB / 2 / half  # `both` is the two directions' sum

    print()
    print("PyTorch %s, %s, %dx%d float32, record = %d B in + %d B out, max error %.2e vs float64"
          % (torch.__version__, torch.cuda.get_device_name(dev), a.dims, a.dims, half, half, max_error))
    fmt = "| %-37s | %6s | %14s | %11s |"
    print(fmt % ("measurement", "batch", "records/s", "GiB/s moved"))
    print(fmt % ("-" * 37, "------", "-" * 14, "-" * 11))
    for name, batch, rps in rows:
        print(fmt % (name, batch, "%.0f" % rps, "%.2f" % (rps * record_bytes / GIB)))
    print(fmt % ("limit: pinned H2D copy", "", "", "%.2f" % h2d))
    print(fmt % ("limit: pinned D2H copy", "", "", "%.2f" % d2h))
    print(fmt % ("limit: pinned H2D + D2H at once", "", "", "%.2f" % both))
    print(fmt % ("limit: copies one after other", "", "%.0f" % sequential_limit, "%.2f" % (sequential_limit * record_bytes / GIB)))
    print(fmt % ("limit: copies overlapped", "", "%.0f" % overlapped_limit, "%.2f" % (overlapped_limit * record_bytes / GIB)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
