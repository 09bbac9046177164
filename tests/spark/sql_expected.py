"""Spark SQL's answers to tests/data/sql/queries.json, into tests/data/sql/expected.json.

Each query's tables are fixture zips (tests/data/fixtures/tables), unzipped to a scratch
folder and registered as temporary views read with their options (snapshot, time travel
`as.of.instant`, incremental begin/end), as a Spark user reads them; then the SQL runs and its
rows are encoded as the fixture expectations are (hudi_spark.encode_row). Rows keep Spark's
order where the query says `ordered`, and are sorted otherwise.

    flock /tmp/spark.lock tests/spark/run.sh tests/spark/sql_expected.py
"""
from __future__ import annotations

import json
import shutil
import tempfile
import zipfile
from pathlib import Path

from hudi_spark import HUDI_1X, encode_row, get_spark, reader

REPO = Path(__file__).resolve().parents[2]
QUERIES = REPO / "tests/data/sql/queries.json"
EXPECTED = REPO / "tests/data/sql/expected.json"
FIXTURES = REPO / "tests/data/fixtures/tables"


def unzip(fixture: str, scratch: Path) -> str:
    dest = scratch / fixture
    with zipfile.ZipFile(FIXTURES / f"{fixture}.zip") as z:
        top = z.namelist()[0].split("/")[0]
        if not (dest / top).exists():
            z.extractall(dest)
    return str(dest / top)


def main():
    spec = json.loads(QUERIES.read_text())
    spark = get_spark(HUDI_1X, app="sql-expected", driver_memory="3g")
    scratch = Path(tempfile.mkdtemp(prefix="sql-expected-"))
    out = {}
    try:
        for q in spec["queries"]:
            for name, t in q["tables"].items():
                path = unzip(t["fixture"], scratch)
                query_type = t.get("query", "snapshot")
                df, _ = reader(spark, path, query_type=query_type, as_of=t.get("as_of"),
                               begin=t.get("start"), end=t.get("end"),
                               extra=q.get("spark_options"))
                df.createOrReplaceTempView(name)
            result = spark.sql(q["sql"])
            rows = [encode_row(r, result.schema) for r in result.collect()]
            if not q.get("ordered"):
                rows.sort(key=lambda r: json.dumps(r, sort_keys=True))
            out[q["name"]] = {"columns": result.columns, "rows": rows}
            print(f"{q['name']}: {len(rows)} rows")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    EXPECTED.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
