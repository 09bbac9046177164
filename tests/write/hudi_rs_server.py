"""hudi_rs_rows.py as a long-running reader, so a test that reads many tables pays for
Python and PyPI `hudi` (hudi-rs) once: each line on stdin is a table path; the answer is
its snapshot rows as sorted JSON lines, then `### END` (or `### ERROR <message>`).
"""
import json
import os
import sys

import pyarrow as pa

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "data", "fixtures", "tools"))
from make_expected import canon_rows  # noqa: E402

from hudi import HudiReadOptions, HudiTableBuilder  # noqa: E402


def rows(path):
    table = HudiTableBuilder.from_base_uri(os.path.abspath(path)).build()
    batches = table.read(HudiReadOptions())
    if not batches:
        return []
    return sorted(json.dumps(r, sort_keys=True) for r in canon_rows(pa.Table.from_batches(batches)))


for line in sys.stdin:
    path = line.strip()
    if not path:
        continue
    try:
        out = "".join(r + "\n" for r in rows(path)) + "### END\n"
    except Exception as e:  # noqa: BLE001 - the test reports it
        out = "### ERROR " + repr(e).replace("\n", " ") + "\n"
    sys.stdout.write(out)
    sys.stdout.flush()
