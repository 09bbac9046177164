"""Snapshot `uuid -> fare` of each table given (copies of the v6 trips fixture with crafted log
files, see tests/log_merge.rs), as Apache Hudi 0.15.0 reads them; a table Hudi refuses gives its
error. One JSON object on stdout: {"<dir name>": {"rows": {uuid: fare}} | {"error": message}}.
Usage: tests/spark/run.sh tests/spark/read_fares.py DIR...
"""
import json
import os
import sys
from pathlib import Path

from hudi_spark import get_spark

# JSON goes to the real stdout; the JVM inherits fd 1 and prints warnings there.
out_file = os.fdopen(os.dup(1), "w")
sys.stdout.flush()
os.dup2(2, 1)
spark = get_spark("0.15.0", app="read-fares", driver_memory="2g")
out = {}
for d in sys.argv[1:]:
    name = Path(d).name
    try:
        rows = spark.read.format("hudi").load(d).select("uuid", "fare").collect()
        out[name] = {"rows": {r["uuid"]: r["fare"] for r in sorted(rows)}}
    except Exception as e:  # Hudi's refusal is the expected answer for that table
        out[name] = {"error": str(e).splitlines()[0][:400]}
out_file.write(json.dumps(out, indent=1, sort_keys=True) + "\n")
out_file.flush()
