"""The fleet's results on disk (fleet.store): atomic parts, resume by content hash, the two tables."""

import math
import os

import blake3
import pytest

from straggle_edu.fleet.store import COLUMNS, Refresh, Spool, Store, atomic_write, clean_row, content_hash, read_rows


def test_content_hash_of_a_file_its_layout_and_a_folder(tmp_path):
    f = tmp_path / "trace-a.csv"
    f.write_bytes(b"step,rank,duration_s\n0,0,1.0\n")
    assert content_hash(f) == blake3.blake3(f.read_bytes()).hexdigest()
    meta = tmp_path / "meta-a.yaml"
    meta.write_text("hours: 3\n")
    with_meta = content_hash(f, meta)
    meta.write_text("hours: 4\n")
    assert with_meta != content_hash(f) and with_meta != content_hash(f, meta)  # a changed layout is a changed job
    folder = tmp_path / "ranks"
    folder.mkdir()
    (folder / "rank-1.json").write_bytes(b"{}")
    (folder / "rank-0.json").write_bytes(b"[]")
    h = content_hash(folder)
    (folder / "rank-0.json").rename(folder / "rank-2.json")  # same bytes, other names: another trace
    assert content_hash(folder) != h


def test_atomic_write_leaves_no_temporary_file(tmp_path):
    p = tmp_path / "x.json"
    atomic_write(p, b"1")
    atomic_write(p, b"22")
    assert p.read_bytes() == b"22" and os.listdir(tmp_path) == ["x.json"]


def test_store_put_cached_done_and_resume(tmp_path):
    st = Store(tmp_path / "out")
    row = {"job_id": "a", "content_hash": "ab" + "0" * 62, "slowdown": 1.25, "meta_gpus": 8, "meta_hours": 2.5}
    st.put(row)
    st.put({"job_id": "b", "error": "no hash, not kept"})
    again = Store(tmp_path / "out")
    assert again.done() == {row["content_hash"]}
    kept = again.cached(row["content_hash"])
    assert kept["slowdown"] == 1.25 and kept["meta_gpus"] == 8 and kept["meta_hours"] == 2.5
    assert (tmp_path / "out" / "parts" / "ab" / f"{row['content_hash']}.json").is_file()


def test_store_removes_what_a_killed_run_left(tmp_path):
    st = Store(tmp_path)
    (st.parts / "ab").mkdir()
    (st.parts / "ab" / ".tmp-abc.json.123").write_text("{half")
    (tmp_path / ".tmp-jobs.csv.456").write_text("job_id,pa")
    (tmp_path / ".tmp-report.html.789").write_text("<!doctype html><ht")  # killed while writing its report
    (tmp_path / "report.html").write_text("<html></html>")
    Store(tmp_path)
    assert not list(tmp_path.rglob(".tmp-*")) and (tmp_path / "report.html").read_text() == "<html></html>"


def test_store_refuses_a_file_as_out(tmp_path):
    (tmp_path / "f").write_text("")
    with pytest.raises(NotADirectoryError, match="--out must be a folder"):
        Store(tmp_path / "f")


def test_tables_round_trip_exactly_in_parquet_and_csv(tmp_path):
    st = Store(tmp_path)
    rows = [{"job_id": "a", "path": "a.parquet", "gpus": 8, "hours": 1 / 3, "slowdown": 1.1 + 1e-16 * 3,
             "top_stage": 3, "error": None},
            {"job_id": "b", "path": "b.csv", "slowdown": float("nan"), "error": "b.csv: the file is empty"}]
    paths = st.write_tables(rows)
    assert sorted(p.name for p in paths) == ["jobs.csv", "jobs.parquet"]
    from_parquet = read_rows(tmp_path)
    (tmp_path / "jobs.parquet").unlink()
    from_csv = read_rows(tmp_path)
    assert from_parquet == from_csv == [clean_row(r) for r in rows]
    assert list(from_csv[0]) == [name for name, _ in COLUMNS]
    assert from_csv[0]["slowdown"] == rows[0]["slowdown"] and from_csv[1]["slowdown"] is None


def test_parquet_types_follow_the_contract(tmp_path):
    import pyarrow.parquet as pq

    Store(tmp_path).write_tables([{"job_id": "a", "gpus": 8}])
    schema = pq.read_schema(tmp_path / "jobs.parquet")
    kinds = {"str": "string", "int": "int64", "float": "double"}
    assert [(f.name, str(f.type)) for f in schema] == [(n, kinds[k]) for n, k in COLUMNS]


def test_clean_row_keeps_the_columns_and_drops_nan():
    r = clean_row({"job_id": 7, "waste": math.inf, "private": 1})
    assert r["job_id"] == "7" and r["waste"] is None and "private" not in r


def test_spool_keeps_rows_in_order():
    s = Spool()
    for i in range(3):
        s.append({"i": i})
    assert [r["i"] for r in s] == [0, 1, 2] == [r["i"] for r in s]
    s.close()


class Clock:
    """A clock the test moves by hand."""

    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


def test_refresh_waits_the_interval_then_rewrites_only_new_rows(tmp_path, monkeypatch):
    clock, rows, writes = Clock(), [], []
    st = Store(tmp_path)
    monkeypatch.setattr(st, "write_tables", lambda r: writes.append(len(r)))
    refresh = Refresh(st, rows, every=30, clock=clock)
    rows.append({"job_id": "a"})
    clock.t += 29.9
    assert not refresh() and writes == []  # the first rewrite only after the interval: a small fleet never pays
    clock.t += 0.1
    assert refresh() and writes == [1]
    clock.t += 100
    assert not refresh() and writes == [1]  # no row since: nothing to rewrite
    rows.append({"job_id": "b"})
    assert refresh() and writes == [1, 2]
    rows.append({"job_id": "c"})
    clock.t += 29
    assert not refresh()
    never = Refresh(st, rows, every=None, clock=clock)
    clock.t += 1e9
    assert not never() and writes == [1, 2]


def test_refresh_after_a_slow_rewrite_waits_ten_times_as_long(tmp_path, monkeypatch):
    clock, rows = Clock(), [{"job_id": "a"}]
    st = Store(tmp_path)

    def slow(r):  # a huge table: the rewrite takes 6 s
        clock.t += 6

    monkeypatch.setattr(st, "write_tables", slow)
    refresh = Refresh(st, rows, every=30, clock=clock)
    clock.t += 30
    assert refresh()
    rows.append({"job_id": "b"})
    clock.t += 59
    assert not refresh()  # due 60 s after the slow rewrite ended, not 30
    clock.t += 1
    assert refresh()


def test_refresh_writes_the_tables_as_the_end_does(tmp_path):
    rows = Spool(tmp_path)
    for i in range(3):
        rows.append({"job_id": f"j{i}", "gpus": 8, "slowdown": 1.5})
    Refresh(Store(tmp_path / "live"), rows, every=0)()
    Store(tmp_path / "end").write_tables(rows)
    for name in ("jobs.csv", "jobs.parquet"):
        assert (tmp_path / "live" / name).read_bytes() == (tmp_path / "end" / name).read_bytes()
    rows.append({"job_id": "j3"})  # the spool still takes rows after it was read
    assert [r["job_id"] for r in rows] == ["j0", "j1", "j2", "j3"]
    rows.close()
