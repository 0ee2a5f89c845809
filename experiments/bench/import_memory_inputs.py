#!/usr/bin/env python3
"""Synthetic inputs for experiments/bench/import_memory.sh (not real data).

  import_memory_inputs.py csv OUT BYTES
      a request trace of at most BYTES bytes (whole records): ts (epoch ms, in order but jittered by up to
      +-2 s, so it needs --sort), app, context_tokens, generated_tokens, note (every 50th
      note quoted with a comma, a quote and a line break, as RFC 4180 allows)
  import_memory_inputs.py functions OUT INVOCATIONS [FUNCTIONS]
      the shape of the Azure Functions 2019 invocation counts
      (invocations_per_function_md.anon.dNN.csv: HashOwner, HashApp, HashFunction, Trigger,
      then counts for minutes 1..1440), FUNCTIONS rows (default 10000) whose counts sum to
      exactly INVOCATIONS; hashes are 64 hex digits as in the real files.
Deterministic: the same arguments give the same bytes.
"""
import hashlib
import sys


def csv_trace(out, size):
    with open(out, "w", newline="") as f:
        f.write("ts,app,context_tokens,generated_tokens,note\n")
        written, k, t = len("ts,app,context_tokens,generated_tokens,note\n"), 0, 1_700_000_000_000
        lines = []
        while True:
            t += 37 + (k * 7919) % 200
            jitter = ((k * 104729) % 4001) - 2000
            note = '"x, ""y""\nz"' if k % 50 == 0 else "n%d" % (k % 1000)
            line = "%d,app%d,%d,%d,%s\n" % (t + jitter, k % 97, 100 + k % 4000, 1 + k % 500, note)
            if written + len(line) > size:
                break
            lines.append(line)
            written += len(line)
            k += 1
            if len(lines) == 100_000:
                f.write("".join(lines))
                lines = []
        f.write("".join(lines))


def functions_trace(out, invocations, functions):
    cells = functions * 1440
    base, extra = divmod(invocations, cells)
    with open(out, "w", newline="") as f:
        f.write("HashOwner,HashApp,HashFunction,Trigger," + ",".join(str(m) for m in range(1, 1441)) + "\n")
        cell = 0
        for r in range(functions):
            h = [hashlib.sha256(("%s%d" % (p, r)).encode()).hexdigest() for p in "oaf"]
            counts = []
            for _ in range(1440):
                counts.append(str(base + (1 if cell < extra else 0)))
                cell += 1
            trigger = "http" if r % 3 else "timer"
            f.write(",".join(h) + "," + trigger + "," + ",".join(counts) + "\n")


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "csv":
        csv_trace(sys.argv[2], int(sys.argv[3]))
    elif len(sys.argv) >= 4 and sys.argv[1] == "functions":
        functions_trace(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]) if len(sys.argv) > 4 else 10000)
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
