"""``bench epoch-time``: the table it prints (tiny shapes)."""

from sklmn.benchmarks._bench import epoch_time


def test_regressors_table(monkeypatch, capsys):
    monkeypatch.setattr(
        epoch_time, "REGRESSION_SHAPES", {"tiny": (12, 6, 2, None)}
    )
    assert epoch_time.main(["--regressors", "--rounds", "1", "--epochs", "2"]) == 0
    rows = [r for r in capsys.readouterr().out.splitlines() if r.startswith("| tiny")]
    assert len(rows) == 4
    assert "feedback='free'" in rows[0] and rows[0].endswith("| 1.00 |")
    assert "no feedback (default)" in rows[1]
