"""Many CLI writers on one table at once, under Hudi's storage-based lock, against moto's
S3 server on loopback (or local files), then checked by this engine and PyPI `hudi`.

    python multi_writer.py BIN FIXTURE_ZIP [--writers 8] [--commits 25] [--store s3|local]
                           [--scenario many|kill|pause] [--skew] [--engine cli|wasm]

many:  WRITERS processes each make COMMITS upserts (one CLI process per commit, or with
       --engine wasm one Node process per writer through the wasm build; --engine both runs
       WRITERS of each kind at once, CLI writers first, on one table): a new key
       of their own every commit (disjoint) and, every 5th commit, an update of one of two
       shared keys (overlapping). Half the writers retry a lost conflict (--commit-retries 3),
       half do not. With --skew writer 0's clock runs 2 s ahead and writer 1's 2 s behind.
kill:  a writer is killed (-9) while it holds the lock; the others go on once the lock's
       validity ends and its instant is rolled back once its heartbeat expired.
pause: a writer is stopped (SIGSTOP) while it holds the lock, past the lock's validity; the
       others commit meanwhile; resumed, it must not commit.

Checks: every acknowledged commit's rows are in the table (the shared keys hold the
acknowledged update with the greatest ordering value), every refused one exited with
CONFLICT and left nothing, no key twice, no pending instant and no heartbeat left,
completion times follow real time (a commit acknowledged before another started completed
before it), and PyPI `hudi` reads the same rows as this engine. Prints a summary line.
"""
import argparse
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
PY = sys.executable
LOCK_OPTS = {
    "hoodie.write.concurrency.mode": "optimistic_concurrency_control",
    "hoodie.write.lock.provider": "org.apache.hudi.client.transaction.lock.StorageBasedLockProvider",
    # Short leases and heartbeats so the kill / pause scenarios take seconds, not minutes
    # (Java's rules: validity >= 10 s and >= 10 x renew interval).
    "hoodie.write.lock.storage.validity.timeout.secs": "10",
    "hoodie.write.lock.storage.renew.interval.secs": "1",
    "hoodie.client.heartbeat.interval_in_ms": "1000",
    # Expired after 5 s: longer than the ±2 s clock skew of --skew, as it must be (a writer
    # compares its own clock with the store's time of the last beat, as Java's does: one
    # 2 s ahead would take 2 s-old beats of live writers for dead ones at 2 s).
    "hoodie.client.heartbeat.tolerable.misses": "5",
    "hoodie.write.lock.wait_time_ms": "120000",
    "hoodie.write.lock.wait_time_ms_between_retry": "50",
}


# Keys the tests write.
OURS = ("W", "SHARED", "AFTER", "VICTIM", "LAST")


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


class Store:
    """The table's home: a local directory, or a bucket on a moto server started here."""

    def __init__(self, kind, src, work):
        self.kind, self.work = kind, work
        self.moto = None
        if kind == "local":
            self.url = os.path.join(work, "table")
            shutil.copytree(src, self.url)
            self.global_args = []
            return
        import boto3

        port = random.randint(20000, 40000)
        self.log = open(os.path.join(work, "moto.log"), "w")
        self.moto = subprocess.Popen(
            [os.path.join(os.path.dirname(PY), "moto_server"), "-p", str(port)],
            stdout=self.log, stderr=subprocess.STDOUT)
        os.environ.update(AWS_ACCESS_KEY_ID="test", AWS_SECRET_ACCESS_KEY="test",
                          AWS_REGION="us-east-1")
        self.endpoint = f"http://127.0.0.1:{port}"
        self.s3 = boto3.client("s3", endpoint_url=self.endpoint, region_name="us-east-1")
        deadline = time.time() + 60
        while True:
            try:
                self.s3.create_bucket(Bucket="lake")
                break
            except Exception as e:
                if time.time() > deadline or self.moto.poll() is not None:
                    fail(f"moto did not start: {e}")
                time.sleep(0.2)
        for root, _, files in os.walk(src):
            for f in files:
                p = os.path.join(root, f)
                self.s3.upload_file(p, "lake", "t/" + os.path.relpath(p, src))
        self.url = "s3://lake/t"
        self.global_args = ["--endpoint", self.endpoint, "--path-style"]

    def list(self, prefix):
        if self.kind == "local":
            d = os.path.join(self.url, prefix)
            return sorted(os.listdir(d)) if os.path.isdir(d) else []
        out, token = [], None
        while True:
            kw = {"Bucket": "lake", "Prefix": f"t/{prefix}/", "Delimiter": "/"}
            if token:
                kw["ContinuationToken"] = token
            r = self.s3.list_objects_v2(**kw)
            out += [o["Key"].rsplit("/", 1)[1] for o in r.get("Contents", [])]
            if not r.get("IsTruncated"):
                return sorted(out)
            token = r["NextContinuationToken"]

    def read(self, key):
        if self.kind == "local":
            p = os.path.join(self.url, key)
            return open(p, "rb").read() if os.path.exists(p) else None
        try:
            return self.s3.get_object(Bucket="lake", Key="t/" + key)["Body"].read()
        except self.s3.exceptions.NoSuchKey:
            return None

    def download(self, dest):
        if self.kind == "local":
            shutil.copytree(self.url, dest)
            return
        paginator = self.s3.get_paginator("list_objects_v2")
        for page in paginator.paginate(Bucket="lake", Prefix="t/"):
            for o in page.get("Contents", []):
                p = os.path.join(dest, o["Key"][2:])
                os.makedirs(os.path.dirname(p), exist_ok=True)
                self.s3.download_file("lake", o["Key"], p)

    def lock_and_heartbeat_requests(self):
        """What moto's access log saw of the lock object and the heartbeats, by method and
        status (e.g. `PUT 412`: a conditional put another writer won; `HEAD` after it: the
        loser checks the object is not its own earlier try). Heartbeat deletes go out as S3
        bulk deletes (`POST ?delete`), which the log does not name: not counted."""
        if not self.moto:
            return None
        self.log.flush()
        counts = {"lock": {}, "heartbeat": {}}
        pattern = re.compile(r'"([A-Z]+) /lake/t/\.hoodie/([^ ?"]*)[^"]*" (\d{3})')
        prefix = re.compile(
            r'"GET /lake\?[^"]*prefix=t(?:/|%2F)\.hoodie(?:/|%2F)\.heartbeat[^"]*" (\d{3})')
        ansi = re.compile(r"\x1b\[[0-9;]*m")  # moto colours the lines of 4xx answers
        for line in open(self.log.name):
            line = ansi.sub("", line)
            m = pattern.search(line)
            if m:
                method, key, status = m.groups()
                kind = ("lock" if key == ".locks/table_lock.json"
                        else "heartbeat" if key.startswith(".heartbeat/") else None)
            elif prefix.search(line):
                method, kind, status = "LIST", "heartbeat", prefix.search(line).group(1)
            else:
                continue
            if kind:
                k = method if status.startswith("2") else f"{method} {status}"
                counts[kind][k] = counts[kind].get(k, 0) + 1
        return counts

    def close(self):
        if self.moto:
            self.moto.kill()
            self.moto.wait()


class Table:
    def __init__(self, bin_, store, work):
        self.bin, self.store, self.work = bin_, store, work
        props = dict(
            line.split("=", 1) for line in
            store.read(".hoodie/hoodie.properties").decode().splitlines()
            if "=" in line and not line.startswith("#"))
        self.key = props["hoodie.table.recordkey.fields"]
        self.order = (props.get("hoodie.table.ordering.fields")
                      or props.get("hoodie.table.precombine.field"))
        rows = self.rows()
        self.template = {k: v for k, v in next(iter(rows.values())).items()
                         if not k.startswith("_hoodie_")}
        self.field = next(k for k, v in self.template.items()
                          if isinstance(v, str) and k not in (self.key, self.order)
                          and k not in props.get("hoodie.table.partition.fields", "").split(","))

    def cli(self, *args, env=None):
        return subprocess.run([self.bin, *self.store.global_args, *args],
                              capture_output=True, text=True, env=env)

    def rows(self):
        r = self.cli("read", self.store.url)
        if r.returncode:
            fail(f"read: {r.stderr}")
        out = {}
        for line in r.stdout.splitlines():
            row = json.loads(line)
            k = row["_hoodie_record_key"]
            if k in out and k.startswith(OURS):
                fail(f"key {k} twice in the snapshot")
            # (A fixture may hold one of its own keys in two partitions: non-global index.)
            out.setdefault(k, row)
        return out

    def batch(self, name, rows):
        path = os.path.join(self.work, name + ".jsonl")
        with open(path, "w") as f:
            for key, value, order in rows:
                r = dict(self.template)
                r[self.key], r[self.field], r[self.order] = key, value, order
                f.write(json.dumps(r) + "\n")
        return path

    def write(self, path, retries=0, env=None, options=LOCK_OPTS):
        args = ["write", self.store.url, "--input", path, "--json",
                "--commit-retries", str(retries)]
        for k, v in options.items():
            args += ["--option", f"{k}={v}"]
        return [self.bin, *self.store.global_args, *args], env


def run_commit(table, w, j, rows, retries, env, results):
    path = table.batch(f"w{w}-c{j}", rows)
    cmd, env = table.write(path, retries, env)
    start = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    end = time.time()
    r = {"w": w, "j": j, "rows": rows, "start": start, "end": end, "code": p.returncode,
         "stderr": p.stderr.strip()}
    if p.returncode == 0:
        r["result"] = json.loads(p.stdout)
    results.append(r)


def check(table, results, expected_shared, label):
    acked = [r for r in results if r["code"] == 0]
    refused = [r for r in results if r["code"] != 0]
    for r in refused:
        if "CONFLICT" not in r["stderr"]:
            fail(f"writer {r['w']} commit {r['j']} failed without CONFLICT: {r['stderr']}")
    rows = table.rows()
    for r in acked:
        for key, value, _ in r["rows"]:
            if key.startswith("SHARED"):
                continue
            got = rows.get(key, {}).get(table.field)
            if got != value:
                fail(f"acknowledged {key}={value!r} reads {got!r}")
    for r in refused:
        for key, _, _ in r["rows"]:
            if not key.startswith("SHARED") and key in rows:
                fail(f"refused commit's key {key} is in the table")
    best = dict(expected_shared)
    for r in acked:
        for key, value, order in r["rows"]:
            if key.startswith("SHARED") and order > best[key][1]:
                best[key] = (value, order)
    for key, (value, _) in best.items():
        if rows[key][table.field] != value:
            fail(f"{key} holds {rows[key][table.field]!r}, expected {value!r}")
    # No pending write instant, no heartbeat left.
    timeline = table.store.list(".hoodie/timeline")
    done = {n.split("_")[0].split(".")[0] for n in timeline if "_" in n.split(".")[0]}
    pending = [n for n in timeline if n.split(".")[0] not in done and "_" not in n
               and ("commit" in n or ".inflight" in n) and "rollback" not in n]
    if pending:
        fail(f"pending instants left: {pending}")
    beats = table.store.list(".hoodie/.heartbeat")
    if beats:
        fail(f"heartbeats left: {beats}")
    # Completion times follow real time.
    times = sorted((r["result"]["completion_time"], r["start"], r["end"]) for r in acked
                   if r["result"]["instant"])
    for a in acked:
        for b in acked:
            if a["end"] < b["start"] and not (
                    a["result"]["completion_time"] < b["result"]["completion_time"]):
                fail(f"completion {a['result']['completion_time']} acknowledged before "
                     f"{b['result']['completion_time']} started")
    if len({t[0] for t in times}) != len(times):
        fail("two commits with one completion time")
    # PyPI hudi reads what we read.
    copy = os.path.join(table.work, f"copy-{label}")
    table.store.download(copy)
    oracle = subprocess.run([PY, os.path.join(HERE, "hudi_rs_rows.py"), copy],
                            capture_output=True, text=True)
    if oracle.returncode:
        fail(f"hudi-rs: {oracle.stderr[-2000:]}")
    theirs = {}
    for line in oracle.stdout.splitlines():
        row = json.loads(line)
        theirs.setdefault(row["_hoodie_record_key"], set()).add(
            (row[table.field], str(row[table.order])))
    ours_all = table.cli("read", table.store.url).stdout.splitlines()
    ours = {}
    for line in ours_all:
        row = json.loads(line)
        ours.setdefault(row["_hoodie_record_key"], set()).add(
            (row[table.field], str(row[table.order])))
    if theirs != ours:
        diff = {k for k in set(theirs) | set(ours) if theirs.get(k) != ours.get(k)}
        fail(f"PyPI hudi and hudi-edge differ on {len(diff)} rows, e.g. {sorted(diff)[:4]}")
    attempts = sum(r["result"].get("attempts", 1) for r in acked)
    rolled = sum(len(r["result"].get("rolled_back", [])) for r in acked)
    return {"acknowledged": len(acked), "refused_conflict": len(refused),
            "attempts_of_acknowledged": attempts, "rolled_back_by_others": rolled,
            "rows": len(rows), "instants_completed": len(times)}


def wasm_writer(table, w, batches, retries, results):
    """One Node process committing `batches` in turn through the wasm build."""
    config = {"url": table.store.url, "options": LOCK_OPTS, "commitRetries": retries,
              "root": table.store.url if table.store.kind == "local" else None,
              "s3": None if table.store.kind == "local" else {
                  "endpoint": table.store.endpoint, "region": "us-east-1",
                  "accessKeyId": "test", "secretAccessKey": "test"}}
    paths = [table.batch(f"w{w}-c{j}", rows) for j, rows in enumerate(batches)]
    p = subprocess.run(["node", os.path.join(HERE, "..", "js", "multi_writer.mjs"),
                        json.dumps(config), *paths], capture_output=True, text=True)
    lines = [json.loads(line) for line in p.stdout.splitlines() if line.strip()]
    if len(lines) != len(batches):
        fail(f"wasm writer {w}: {len(lines)} answers for {len(batches)} commits: {p.stderr[-2000:]}")
    for j, (rows, rec) in enumerate(zip(batches, lines)):
        r = {"w": w, "j": j, "rows": rows, "start": rec["start"], "end": rec["end"],
             "code": rec["code"], "stderr": rec.get("error", "")}
        if rec["code"] == 0:
            res = rec["result"]
            r["result"] = {"instant": res["instant"], "completion_time": res["completionTime"],
                           "attempts": res["attempts"], "rolled_back": res["rolledBack"]}
        results.append(r)


def scenario_many(table, writers, commits, skew, engine="cli", disjoint=False):
    base = 3_000_000_000_000
    # The shared keys exist first (one plain single-writer commit).
    setup = table.batch("setup", [("SHARED-0", "setup", base), ("SHARED-1", "setup", base)])
    cmd, _ = table.write(setup, options={})
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        fail(f"setup: {p.stderr}")
    expected = {"SHARED-0": ("setup", base), "SHARED-1": ("setup", base)}
    results = []

    def writer(w):
        env = dict(os.environ)
        if skew and w < 2:
            env["HUDI_EDGE_CLOCK_SKEW_MS"] = "2000" if w == 0 else "-2000"
        batches = []
        for j in range(commits):
            rows = [(f"W{w}-{j}", f"w{w}c{j}", base + 1000 + j * 100 + w)]
            if j % 5 == 0 and not disjoint:
                rows.append((f"SHARED-{(j // 5) % 2}", f"w{w}c{j}", base + 1000 + j * 100 + w))
            batches.append(rows)
        retries = 3 if w % 2 == 0 else 0
        if engine == "wasm" or (engine == "both" and w >= writers):
            wasm_writer(table, w, batches, retries, results)
            return
        for j, rows in enumerate(batches):
            run_commit(table, w, j, rows, retries, env, results)

    t0 = time.time()
    total = writers * 2 if engine == "both" else writers
    threads = [threading.Thread(target=writer, args=(w,)) for w in range(total)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.time() - t0
    requests = table.store.lock_and_heartbeat_requests()
    summary = check(table, results, expected, "many")
    summary.update(requests=requests)
    summary.update(commits_per_s=round(summary["acknowledged"] / wall, 2))
    summary.update(engine=engine, writers=total, commits_each=commits, seconds=round(wall, 1),
                   skew_ms="+2000/-2000 (writers 0/1)" if skew else "0")
    return summary


def lock_owner(table):
    raw = table.store.read(".hoodie/.locks/table_lock.json")
    return json.loads(raw) if raw else None


def wait_for_lock(table, proc, timeout=60):
    """Until `proc` holds the lock inside its commit: the lock is held (not expired) while
    its instant is pending on the timeline (the write takes the lock once before, briefly,
    to take its instant time; a kill then would leave no instant to roll back)."""
    before = set(table.store.list(".hoodie/timeline"))
    deadline = time.time() + timeout
    while time.time() < deadline:
        lock = lock_owner(table)
        if lock and not lock["expired"] and proc.poll() is None:
            new = [n for n in table.store.list(".hoodie/timeline") if n not in before]
            if any(n.endswith(".inflight") for n in new) and lock_owner(table) == lock:
                return lock
        time.sleep(0.02)
    fail("the held writer never took the lock")


def scenario_interrupted(table, how):
    base = 4_000_000_000_000
    path = table.batch("victim", [("VICTIM", "victim", base)])
    cmd, _ = table.write(path)
    env = dict(os.environ, HUDI_EDGE_TEST_PAUSE_IN_COMMIT_MS="3000")
    victim = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)
    lock = wait_for_lock(table, victim)
    held_at = time.time()
    if how == "kill":
        victim.send_signal(signal.SIGKILL)
    else:
        victim.send_signal(signal.SIGSTOP)
    # Others write meanwhile: they wait for the lock's validity to end.
    results = []
    threads = [threading.Thread(target=run_commit, args=(
        table, w, 0, [(f"AFTER-{w}", f"after{w}", base + w)], 3, None, results))
        for w in range(3)]
    for t in threads:
        t.start()
    if how == "pause":
        time.sleep(14)  # past the 10 s validity (+ 0.5 s drift allowance)
        victim.send_signal(signal.SIGCONT)
    for t in threads:
        t.join()
    out, err = victim.communicate()
    waited = min(r["end"] for r in results if r["code"] == 0) - held_at
    if how == "pause":
        if victim.returncode == 0 or "CONFLICT" not in err:
            fail(f"the paused writer committed or failed oddly: {victim.returncode} {err}")
    # Its instant is rolled back by the next writer once its heartbeat expired: one more
    # write after everything settled.
    time.sleep(2.5)
    results.append({"w": 9, "j": 0, "rows": [], "code": 0, "start": time.time(),
                    "end": time.time(), "stderr": ""})
    cmd, _ = table.write(table.batch("last", [("LAST", "last", base + 9)]))
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        fail(f"last write: {p.stderr}")
    results[-1].update(result=json.loads(p.stdout), rows=[("LAST", "last", base + 9)],
                       end=time.time())
    rolled = [x for r in results if r["code"] == 0 for x in r["result"]["rolled_back"]]
    rows = table.rows()
    if "VICTIM" in rows:
        fail("the interrupted writer's row is in the table")
    summary = check(table, results, {}, how)
    summary.update(scenario=how, victim_lock_owner=lock["owner"],
                   others_first_commit_after_s=round(waited, 1),
                   victim_instants_rolled_back=[x["instant"] for x in rolled],
                   victim_exit=victim.returncode, victim_error=err.strip()[-200:])
    if how == "kill" and not rolled:
        fail("the killed writer's instant was not rolled back")
    if waited < 10:
        fail(f"others committed {waited:.1f} s after the victim took the lock (< validity)")
    return summary


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bin")
    ap.add_argument("fixture_zip")
    ap.add_argument("--writers", type=int, default=8)
    ap.add_argument("--commits", type=int, default=25)
    ap.add_argument("--store", default="s3", choices=["s3", "local"])
    ap.add_argument("--scenario", default="many", choices=["many", "kill", "pause"])
    ap.add_argument("--skew", action="store_true")
    ap.add_argument("--engine", default="cli", choices=["cli", "wasm", "both"])
    ap.add_argument("--disjoint", action="store_true",
                    help="no shared keys: every commit inserts only its own key (throughput)")
    ap.add_argument("--keep", metavar="DIR",
                    help="keep the final snapshot (as PyPI hudi read it) in DIR, e.g. for Spark")
    ap.add_argument("--latency-ms", type=int, default=0,
                    help="the CLI adds this delay to every request (local store)")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="multi-writer.")
    store = None
    try:
        with zipfile.ZipFile(a.fixture_zip) as z:
            z.extractall(os.path.join(work, "src"))
        src = next(os.path.join(r) for r, d, _ in os.walk(os.path.join(work, "src"))
                   if ".hoodie" in d)
        store = Store(a.store, src, work)
        if a.latency_ms:
            store.global_args += ["--latency-ms", str(a.latency_ms)]
        table = Table(os.path.abspath(a.bin), store, work)
        if a.scenario == "many":
            summary = scenario_many(table, a.writers, a.commits, a.skew, a.engine, a.disjoint)
        else:
            summary = scenario_interrupted(table, a.scenario)
        summary.update(store=a.store, table=os.path.basename(a.fixture_zip))
        if a.keep:
            shutil.copytree(os.path.join(work, f"copy-{a.scenario}"), a.keep)
        print(json.dumps(summary))
    finally:
        if store:
            store.close()
        shutil.rmtree(work, ignore_errors=True)


main()
