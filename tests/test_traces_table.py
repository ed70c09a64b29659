"""traces/_table.py: the folder listing every per-rank reader shares."""

import pytest

from straggle_edu.traces._table import TraceError, folder_files


def test_folder_files_one_file_is_itself(tmp_path):
    f = tmp_path / "dump_3"
    f.write_text("")
    assert folder_files(f, lambda _: False, "no dumps") == [f]


def test_folder_files_keeps_matching_files_sorted_and_skips_folders(tmp_path):
    for name in ("rank_2.log", "rank_10.log", "readme.txt"):
        (tmp_path / name).write_text("")
    (tmp_path / "sub.log").mkdir()
    got = folder_files(tmp_path, lambda f: f.name.endswith(".log"), "no logs")
    assert [f.name for f in got] == ["rank_10.log", "rank_2.log"]


def test_folder_files_empty_folder_names_the_problem(tmp_path):
    (tmp_path / "readme.txt").write_text("")
    with pytest.raises(TraceError, match="no logs here"):
        folder_files(tmp_path, lambda f: f.name.endswith(".log"), "no logs here")


def test_folder_files_missing_path(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such file or folder"):
        folder_files(tmp_path / "gone", bool, "no logs")
