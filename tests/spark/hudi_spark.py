"""Helper: start a local SparkSession with the Apache Hudi Spark bundle of a chosen version.

Run with the venv made by setup.sh (tests/spark/run.sh does this for you):

    from hudi_spark import get_spark
    spark = get_spark("1.1.1")      # table version 9
    spark = get_spark("0.15.0")     # table version 6

Also holds the JSON value encoding shared by read_table.py and make_archive_fixtures.py.
"""
from __future__ import annotations

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
    # Spark hands TIMESTAMP values to Python as naive datetimes in the Python process's local
    # zone; pin it to UTC so encode_value() can tag them with Z
    os.environ["TZ"] = "UTC"
    import time as _time
    _time.tzset()
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
    # HUDI_SPARK_CONF="k=v k=v": settings for one run (e.g. the non-vectorized Parquet reader).
    env_conf = dict(kv.split("=", 1) for kv in os.environ.get("HUDI_SPARK_CONF", "").split())
    for k, v in {**(extra_conf or {}), **env_conf}.items():
        b = b.config(k, v)
    spark = b.getOrCreate()
    spark.sparkContext.setLogLevel(os.environ.get("HUDI_SPARK_LOG_LEVEL", "WARN"))
    return spark


def read_cdc_feed(spark, path, start, end=None):
    """The change feed of `(start, end]` as Spark's CDC query returns it: [op, ts_ms, before,
    after] rows, sorted (nulls as empty strings)."""
    reader = spark.read.format("hudi") \
        .option("hoodie.datasource.query.type", "incremental") \
        .option("hoodie.datasource.query.incremental.format", "cdc") \
        .option("hoodie.datasource.read.begin.instanttime", start)
    if end is not None:
        reader = reader.option("hoodie.datasource.read.end.instanttime", end)
    cols = ["op", "ts_ms", "before", "after"]
    got = [[r[c] for c in cols] for r in reader.load(path).select(*cols).collect()]
    return sorted(got, key=lambda r: [x if x is not None else "" for x in r])


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
    # A struct (pyspark Row) is a tuple too: it must be checked first.
    if hasattr(v, "asDict"):
        return {k: encode_value(x) for k, x in v.asDict(recursive=False).items()}
    if isinstance(v, (list, tuple)):
        return [encode_value(x) for x in v]
    return str(v)


def encode_row(row, schema=None) -> dict:
    """`schema` (the DataFrame's) gives top-level decimals their column's scale: pyspark may
    hand over a small value with another exponent (unscaled -1 at scale 10 as -1.00E-10)."""
    scales = {}
    if schema is not None:
        from pyspark.sql.types import DecimalType
        scales = {f.name: f.dataType.scale for f in schema.fields if isinstance(f.dataType, DecimalType)}
    out = {}
    for k in row.__fields__:
        v = row[k]
        if k in scales and isinstance(v, decimal.Decimal):
            with decimal.localcontext() as ctx:
                ctx.prec = 100
                v = v.quantize(decimal.Decimal(1).scaleb(-scales[k]))
        out[k] = encode_value(v)
    return out


def rows_to_json(df, key_col: str = "_hoodie_record_key") -> list[dict]:
    """Collect a DataFrame into encoded dict rows sorted by (record key, partition path, row JSON)."""
    rows = [encode_row(r, df.schema) for r in df.collect()]
    def sk(r):
        return (str(r.get(key_col)), str(r.get("_hoodie_partition_path")), json.dumps(r, sort_keys=True))
    rows.sort(key=sk)
    return rows


# ---------------------------------------------------------------------------
# Reading helpers (shared by read_table.py and make_archive_fixtures.py)
# ---------------------------------------------------------------------------
def table_version(path: str) -> int:
    props = read_properties(path)
    return int(props.get("hoodie.table.version", "0"))


def read_properties(path: str) -> dict:
    props = {}
    for line in (Path(path) / ".hoodie" / "hoodie.properties").read_text().splitlines():
        if "=" in line and not line.startswith("#"):
            k, v = line.split("=", 1)
            props[k] = v.replace("\\:", ":")
    return props


def schema_on_read_options(path: str) -> dict:
    """`hoodie.schema.on.read.enable` for a table with an InternalSchema history, else none."""
    if (Path(path) / ".hoodie" / ".schema").is_dir() and any((Path(path) / ".hoodie" / ".schema").iterdir()):
        return {"hoodie.schema.on.read.enable": "true"}
    return {}


def reader(spark, path: str, query_type: str = "snapshot", as_of: str | None = None,
           begin: str | None = None, end: str | None = None, extra: dict | None = None):
    """DataFrameReader options for the Hudi query types; returns (df, options_used). A table
    whose schema evolved on read (a `.hoodie/.schema/` history) is read as its users read it,
    with `hoodie.schema.on.read.enable` (columns matched by id)."""
    opts = {"hoodie.datasource.query.type": query_type}
    opts.update(schema_on_read_options(path))
    if as_of:
        opts["as.of.instant"] = as_of
    if query_type == "incremental":
        opts["hoodie.datasource.read.begin.instanttime"] = begin or "000"
        if end:
            opts["hoodie.datasource.read.end.instanttime"] = end
    opts.update(extra or {})
    return spark.read.format("hudi").options(**opts).load(path), opts


def list_timeline(path: str) -> dict:
    """Timeline files relative to the base path: active and archived/history."""
    base = Path(path)
    hood = base / ".hoodie"
    out = {"active": [], "archived": []}
    tl = hood / "timeline" if (hood / "timeline").is_dir() else hood
    for f in sorted(tl.iterdir()):
        if f.is_file() and not f.name.endswith(".crc") and f.name != "hoodie.properties" and f.name[0].isdigit():
            out["active"].append(str(f.relative_to(base)))
    for arch in (hood / "timeline" / "history", hood / "archived"):
        if arch.is_dir():
            for f in sorted(arch.rglob("*")):
                if f.is_file() and not f.name.endswith(".crc"):
                    out["archived"].append(str(f.relative_to(base)))
    return out


def active_completed_instants(path: str) -> list[dict]:
    """Completed instants of the active timeline from file names (v6 and v8/v9 layouts)."""
    import re
    base = Path(path) / ".hoodie"
    res = []
    if (base / "timeline").is_dir():
        for f in (base / "timeline").iterdir():
            m = re.match(r"^(\d+)_(\d+)\.(\w+)$", f.name)
            if m:
                res.append({"requested_time": m.group(1), "completion_time": m.group(2), "action": m.group(3)})
    else:
        for f in base.iterdir():
            m = re.match(r"^(\d+)\.(\w+)$", f.name)
            if m and m.group(2) not in ("inflight", "requested"):
                res.append({"requested_time": m.group(1), "completion_time": None, "action": m.group(2)})
    return sorted(res, key=lambda r: r["requested_time"])


def archived_instants(spark, path: str) -> list[dict]:
    """Instants of the archived timeline, read by Hudi's own Java classes through py4j."""
    jvm = spark._jvm
    hconf = spark._jsc.hadoopConfiguration()
    sconf = jvm.org.apache.hudi.storage.hadoop.HadoopStorageConfiguration(hconf)
    mc = (jvm.org.apache.hudi.common.table.HoodieTableMetaClient.builder()
          .setConf(sconf).setBasePath(path).build())
    arch = mc.getArchivedTimeline()
    try:  # 1.x loads lazily; ask for everything
        arch = arch.reload() if hasattr(arch, "reload") else arch
    except Exception:
        pass
    out = []
    it = arch.getInstants()
    for i in range(it.size()):
        inst = it.get(i)
        try:
            req = inst.requestedTime()
        except Exception:
            req = inst.getTimestamp()
        try:
            comp = inst.getCompletionTime()
        except Exception:
            comp = None
        out.append({"requested_time": req, "completion_time": comp, "action": inst.getAction(),
                    "state": str(inst.getState())})
    return out
