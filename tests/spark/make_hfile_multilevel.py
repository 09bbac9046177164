"""A metadata table whose record_index HFile has a multi-level block index, written by Apache
Hudi 0.15.0 (HBase's HFile writer): the index writer starts a new index level whenever an index
chunk exceeds `hfile.index.block.max.size`, which reaches it through the Hadoop configuration.

Usage: tests/spark/run.sh tests/spark/make_hfile_multilevel.py OUT_DIR [ROWS]
Writes the table to OUT_DIR/hfile_multilevel (bulk_insert; the record index is then built by
enabling it on a second, tiny upsert, so its HFiles are base files written in one go).
"""
import sys
from pathlib import Path

from hudi_spark import get_spark

out = Path(sys.argv[1])
rows = int(sys.argv[2]) if len(sys.argv) > 2 else 60000
base = out / "hfile_multilevel"

spark = get_spark("0.15.0", app="hfile-multilevel", driver_memory="3g", extra_conf={
    # Index chunks of at most 256 bytes and at least 2 entries: a few data blocks already make
    # leaf and intermediate index levels (HBase's defaults are 128 KB and 16).
    "spark.hadoop.hfile.index.block.max.size": "256",
    "spark.hadoop.hfile.index.block.min.entries": "2",
})

common = {
    "hoodie.table.name": "hfile_multilevel",
    "hoodie.datasource.write.recordkey.field": "key",
    "hoodie.datasource.write.partitionpath.field": "part",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.datasource.write.table.type": "COPY_ON_WRITE",
    "hoodie.datasource.write.hive_style_partitioning": "true",
    "hoodie.metadata.enable": "true",
    "hoodie.hfile.block.size": "4096",
    "hoodie.parquet.small.file.limit": "0",
    "hoodie.index.bloom.num_entries": "100",
    "hoodie.bulkinsert.shuffle.parallelism": "1",
    "hoodie.upsert.shuffle.parallelism": "1",
}

df = spark.range(rows).selectExpr(
    "format_string('k%07d', id) as key",
    "'p0' as part",
    "id as ts",
    "cast(id % 97 as int) as qty",
)
(df.coalesce(1).write.format("hudi").options(**common)
   .option("hoodie.datasource.write.operation", "bulk_insert")
   .mode("overwrite").save(str(base)))

rli = dict(common)
rli.update({
    "hoodie.metadata.record.index.enable": "true",
    "hoodie.metadata.record.index.min.filegroup.count": "1",
    "hoodie.metadata.record.index.max.filegroup.count": "1",
    "hoodie.index.type": "RECORD_INDEX",
})
one = spark.range(1).selectExpr("'k0000000' as key", "'p0' as part", "1000000000 as ts",
                                "cast(7 as int) as qty")
(one.write.format("hudi").options(**rli)
    .option("hoodie.datasource.write.operation", "upsert")
    .mode("append").save(str(base)))
print("written", base)
