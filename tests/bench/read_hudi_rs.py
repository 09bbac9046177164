"""Reads a table snapshot with the PyPI `hudi` package (hudi-rs) and prints one JSON line:
{rows, seconds, peak_rss_mb}. Usage: python read_hudi_rs.py TABLE_DIR [--ro]"""
import json
import resource
import sys
import time

from hudi import HudiTableBuilder

path = sys.argv[1]
opts = {"hoodie.read.use.read_optimized.mode": "true"} if "--ro" in sys.argv else {}
t0 = time.perf_counter()
builder = HudiTableBuilder.from_base_uri(path)
for k, v in opts.items():
    builder = builder.with_option(k, v)
table = builder.build()
batches = table.read_snapshot()
rows = sum(b.num_rows for b in batches)
seconds = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"rows": rows, "seconds": seconds, "peak_rss_mb": round(peak)}))
