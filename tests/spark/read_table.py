#!/usr/bin/env python3
"""Read any Hudi table with Apache Hudi Spark and print JSON lines (one row per line).

    tests/spark/run.sh tests/spark/read_table.py TABLE_PATH                      # latest snapshot
    tests/spark/run.sh tests/spark/read_table.py TABLE_PATH --as-of 20250101...  # time travel
    tests/spark/run.sh tests/spark/read_table.py TABLE_PATH --start T1 --end T2  # incremental (T1, T2]
    tests/spark/run.sh tests/spark/read_table.py TABLE_PATH --read-optimized     # MOR base files only
    options: --hudi 1.1.1|0.15.0 (default: from hoodie.table.version: 6 -> 0.15.0, else 1.1.1)
             --columns a,b,c   --where "SQL predicate"   --count   --timeline   --limit N
             --opt key=value (extra read option, repeatable)

Incremental bounds: Hudi 1.x (table version >= 8) treats --start/--end as COMPLETION times,
0.x (table version 6) as requested instant times; the range is (start, end].
Value encoding: decimals as strings with scale, timestamps ISO-8601 UTC with 6 fraction digits and
Z, dates YYYY-MM-DD, binary hex. Rows are sorted by (_hoodie_record_key, partition path, row JSON)
when meta columns are present. Hudi/Spark log output goes to stderr; stdout has JSON only.
With --timeline, the first line is {"timeline": {...}} with the active/archived timeline files.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

from hudi_spark import (HUDI_0X, HUDI_1X, get_spark, list_timeline, read_properties, reader,
                        rows_to_json, encode_row)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("path")
    ap.add_argument("--as-of")
    ap.add_argument("--start")
    ap.add_argument("--end")
    ap.add_argument("--read-optimized", action="store_true")
    ap.add_argument("--hudi", help="Hudi bundle version to read with")
    ap.add_argument("--columns")
    ap.add_argument("--where")
    ap.add_argument("--count", action="store_true", help="print only {\"count\": N}")
    ap.add_argument("--timeline", action="store_true")
    ap.add_argument("--limit", type=int)
    ap.add_argument("--opt", action="append", default=[], help="extra read option key=value")
    a = ap.parse_args()

    # JSON goes to the real stdout; the JVM (which inherits fd 1) and its library chatter
    # (e.g. JOL "# WARNING: Unable to get Instrumentation") are sent to stderr instead.
    out = os.fdopen(os.dup(1), "w")
    sys.stdout.flush()
    os.dup2(2, 1)

    props = read_properties(a.path)
    tver = int(props.get("hoodie.table.version", "0"))
    hv = a.hudi or (HUDI_0X if tver <= 6 else HUDI_1X)
    spark = get_spark(hv, app="read_table", driver_memory="4g")
    extra = dict(kv.split("=", 1) for kv in a.opt)
    if a.start or a.end:
        df, _ = reader(spark, a.path, "incremental", begin=a.start or "000", end=a.end, extra=extra)
    elif a.read_optimized:
        df, _ = reader(spark, a.path, "read_optimized", as_of=a.as_of, extra=extra)
    else:
        df, _ = reader(spark, a.path, as_of=a.as_of, extra=extra)
    if a.where:
        df = df.where(a.where)
    if a.columns:
        df = df.select(*[c.strip() for c in a.columns.split(",")])
    if a.timeline:
        out.write(json.dumps({"timeline": list_timeline(a.path), "table_version": tver, "hudi": hv}) + "\n")
    if a.count:
        out.write(json.dumps({"count": df.count()}) + "\n")
    else:
        if "_hoodie_record_key" in df.columns:
            rows = rows_to_json(df if a.limit is None else df.limit(a.limit))
        else:
            key = props.get("hoodie.table.recordkey.fields", "").split(",")[0]
            rows = [encode_row(r, df.schema) for r in (df if a.limit is None else df.limit(a.limit)).collect()]
            rows.sort(key=lambda r: (str(r.get(key)), json.dumps(r, sort_keys=True)))
        for r in rows:
            out.write(json.dumps(r) + "\n")
    out.flush()
    spark.stop()


if __name__ == "__main__":
    main()
