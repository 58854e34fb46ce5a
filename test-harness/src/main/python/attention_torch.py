"""The torch peer of kvpager's decode-attention benchmark (AttentionBenchmark).

torch.nn.functional.scaled_dot_product_attention for one new token per sequence over a contiguous
bf16 cache of the same shape as the paged one: queries (B, Hq, 1, D), keys and values
(B, Hkv, S, D), grouped-query attention through enable_gqa. Timed with CUDA events, the same
number of launches per round as the Java side; prints one line per shape:
    row BxS median_us min_us max_us

With --serve it times one round per request instead, so that its rounds alternate with the Java
side's: it prints "ready" once the tensors are on the GPU, then for each line "round" read from
standard input one line "time BxS us" per shape and "done"; it ends at "quit" or the end of input.
"""
import argparse
import statistics
import sys

import torch
import torch.nn.functional as F


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("shapes", nargs="+", help="BxS, e.g. 64x4096")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--launches", type=int, default=10)
    parser.add_argument("--heads", default="32/8", help="query heads / KV heads")
    parser.add_argument("--head-size", type=int, default=128)
    parser.add_argument("--serve", action="store_true", help="one round per 'round' line on standard input")
    args = parser.parse_args()
    hq, hkv = (int(x) for x in args.heads.split("/"))
    d = args.head_size
    if not torch.cuda.is_available():
        print("no CUDA device for torch", flush=True)
        return 2
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name(0)}", flush=True)
    cases = []
    for shape in args.shapes:
        b, s = (int(x) for x in shape.split("x"))
        q = torch.randn(b, hq, 1, d, device="cuda", dtype=torch.bfloat16)
        k = torch.randn(b, hkv, s, d, device="cuda", dtype=torch.bfloat16)
        v = torch.randn(b, hkv, s, d, device="cuda", dtype=torch.bfloat16)
        cases.append((shape, q, k, v))
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)

    def micros(q, k, v):
        for _ in range(2):
            F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
        start.record()
        for _ in range(args.launches):
            F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
        stop.record()
        stop.synchronize()
        return start.elapsed_time(stop) * 1000.0 / args.launches

    if args.serve:
        return serve(cases, micros)
    times = {shape: [] for shape, *_ in cases}
    for _ in range(args.rounds):
        for shape, q, k, v in cases:
            times[shape].append(micros(q, k, v))
    for shape, values in times.items():
        print(f"row {shape} {statistics.median(values):.1f} {min(values):.1f} {max(values):.1f}", flush=True)
    return 0


def serve(cases, micros):
    """One round over every shape per "round" line of standard input, until "quit" or its end."""
    print("ready", flush=True)
    for line in sys.stdin:
        command = line.strip()
        if command == "quit":
            break
        if command != "round":
            print(f"error: unknown request {command!r}", flush=True)
            return 2
        for shape, q, k, v in cases:
            print(f"time {shape} {micros(q, k, v):.2f}", flush=True)
        print("done", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
