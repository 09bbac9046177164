#!/usr/bin/env python3
"""Compares two files of query-tagged rows (`{"query": Q, "row": {...}}` per line, as
spark_queries.py and spark_lib.sh's `ours_queries` write them) query by query: prints
`query spark/ours same|DIFFERENT` cells joined by "; " and exits 1 on a difference.

    compare_queries.py SPARK_JSONL OURS_JSONL QUERY...
"""
import json
import sys


def load(path):
    by = {}
    for line in open(path):
        if line.strip():
            d = json.loads(line)
            by.setdefault(d["query"], []).append(json.dumps(d["row"], sort_keys=True))
    return {k: sorted(v) for k, v in by.items()}


def main():
    spark, ours = load(sys.argv[1]), load(sys.argv[2])
    cells, bad = [], False
    for q in sys.argv[3:]:
        s, o = spark.get(q, []), ours.get(q, [])
        bad |= s != o
        cells.append(f"{q} {len(s)}/{len(o)} {'same' if s == o else 'DIFFERENT'}")
    print("; ".join(cells))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
