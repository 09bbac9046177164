"""Helper: start a local SparkSession with the Apache Hudi Spark bundle of a chosen version.

Run with the venv made by setup.sh (tests/spark/run.sh does this for you):

    from hudi_spark import get_spark
    spark = get_spark("1.1.1")      # table version 9
    spark = get_spark("0.15.0")     # table version 6

Also holds the JSON value encoding shared by read_table.py and make_archive_fixtures.py.
"""
from __future__ import annotations

import base64
import datetime as _dt
import decimal
import json
import os
import sys
from pathlib import Path

HUDI_1X = "1.1.1"   # writes table version 9
HUDI_0X = "0.15.0"  # writes table version 6

CACHE = Path(os.environ.get("HUDI_EDGE_CACHE", str(Path.home() / ".cache" / "hudi-edge")))
SPARK_DIR = CACHE / "spark"
JARS_DIR = SPARK_DIR / "jars"
TABLES_DIR = CACHE / "tables"


def bundle_jar(hudi_version: str) -> Path:
    jar = JARS_DIR / f"hudi-spark3.5-bundle_2.12-{hudi_version}.jar"
    if not jar.is_file():
        sys.exit(f"missing {jar}: run tests/spark/setup.sh first")
    return jar


def get_spark(hudi_version: str = HUDI_1X, app: str = "hudi-edge", driver_memory: str | None = None,
              extra_conf: dict | None = None):
    """Start (or return) a local[2] SparkSession with the given Hudi bundle on the classpath."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("TZ", "UTC")
    from pyspark.sql import SparkSession

    local_dir = SPARK_DIR / "tmp"
    local_dir.mkdir(parents=True, exist_ok=True)
    mem = driver_memory or os.environ.get("HUDI_SPARK_DRIVER_MEMORY", "6g")
    b = (SparkSession.builder.appName(app)
         .master(os.environ.get("HUDI_SPARK_MASTER", "local[2]"))
         .config("spark.jars", str(bundle_jar(hudi_version)))
         .config("spark.driver.memory", mem)
         .config("spark.serializer", "org.apache.spark.serializer.KryoSerializer")
         .config("spark.sql.extensions", "org.apache.spark.sql.hudi.HoodieSparkSessionExtension")
         .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.hudi.catalog.HoodieCatalog")
         .config("spark.kryo.registrator", "org.apache.spark.HoodieSparkKryoRegistrar")
         .config("spark.sql.session.timeZone", "UTC")
         .config("spark.sql.shuffle.partitions", "4")
         .config("spark.default.parallelism", "2")
         .config("spark.ui.enabled", "false")
         .config("spark.ui.showConsoleProgress", "false")
         .config("spark.local.dir", str(local_dir))
         .config("spark.sql.warehouse.dir", str(SPARK_DIR / "warehouse"))
         .config("spark.driver.extraJavaOptions",
                 f"-Duser.timezone=UTC -Dderby.system.home={SPARK_DIR / 'derby'}"))
    for k, v in (extra_conf or {}).items():
        b = b.config(k, v)
    spark = b.getOrCreate()
    spark.sparkContext.setLogLevel(os.environ.get("HUDI_SPARK_LOG_LEVEL", "WARN"))
    return spark


# ---------------------------------------------------------------------------
# JSON value encoding (same as shared/fixtures/expected):
#   decimals -> string with the column's scale, timestamps -> ISO-8601 with 6 fraction digits + Z,
#   dates -> YYYY-MM-DD, binary -> lowercase hex, structs -> objects, maps -> [[k, v], ...].
# ---------------------------------------------------------------------------
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


def encode_value(v):
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        return v
    if isinstance(v, decimal.Decimal):
        return format(v, "f")
    if isinstance(v, _dt.datetime):
        if v.tzinfo is None:  # Spark returns naive local time; session TZ and TZ env are UTC
            v = v.replace(tzinfo=_dt.timezone.utc)
        v = v.astimezone(_dt.timezone.utc)
        return v.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    if isinstance(v, _dt.date):
        return v.isoformat()
    if isinstance(v, (bytes, bytearray)):
        return bytes(v).hex()
    if isinstance(v, dict):
        return [[encode_value(k), encode_value(x)] for k, x in v.items()]
    if isinstance(v, (list, tuple)):
        return [encode_value(x) for x in v]
    if hasattr(v, "asDict"):
        return {k: encode_value(x) for k, x in v.asDict(recursive=False).items()}
    return str(v)


def encode_row(row) -> dict:
    return {k: encode_value(row[k]) for k in row.__fields__}


def rows_to_json(df, key_col: str = "_hoodie_record_key") -> list[dict]:
    """Collect a DataFrame into encoded dict rows sorted by (record key, partition path, row JSON)."""
    rows = [encode_row(r) for r in df.collect()]
    def sk(r):
        return (str(r.get(key_col)), str(r.get("_hoodie_partition_path")), json.dumps(r, sort_keys=True))
    rows.sort(key=sk)
    return rows
