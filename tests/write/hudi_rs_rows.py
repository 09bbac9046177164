"""Reads a table with PyPI `hudi` (hudi-rs) and prints its rows as JSON lines in the
fixtures' canonical encoding (tests/data/fixtures/tools/make_expected.py), sorted.

    python hudi_rs_rows.py TABLE|s3://bucket/prefix [--as-of INSTANT] [--start T1 --end T2]
"""
import json
import os
import sys

import pyarrow as pa

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "data", "fixtures", "tools"))
from make_expected import canon_rows  # noqa: E402

from hudi import HudiQueryType, HudiReadOptions, HudiTableBuilder  # noqa: E402


def main():
    args = sys.argv[1:]
    # s3:// URIs as they are (object_store takes the endpoint and keys from AWS_* variables).
    path = args[0] if "://" in args[0] else os.path.abspath(args[0])
    opt = lambda name: args[args.index(name) + 1] if name in args else None  # noqa: E731
    table = HudiTableBuilder.from_base_uri(path).build()
    as_of, start, end = opt("--as-of"), opt("--start"), opt("--end")
    options = HudiReadOptions()
    if start or end:
        options = options.with_query_type(HudiQueryType.Incremental).with_start_timestamp(start or "0")
        if end:
            options = options.with_end_timestamp(end)
    elif as_of:
        options = options.with_as_of_timestamp(as_of)
    batches = table.read(options)
    if not batches:
        return
    rows = canon_rows(pa.Table.from_batches(batches))
    lines = sorted(json.dumps(r, sort_keys=True) for r in rows)
    sys.stdout.write("".join(line + "\n" for line in lines))


main()
