"""One right answer, one wrong answer: how every exercise test checks a checker."""


def assert_right(q, answer, capsys):
    """``q`` accepts ``answer`` and tells the reader so."""
    q.check(answer)
    assert q.is_correct(answer)
    assert "✓" in capsys.readouterr().out


def assert_wrong(q, answer, capsys):
    """``q`` rejects ``answer`` and tells the reader so."""
    q.check(answer)
    assert not q.is_correct(answer)
    assert "✗" in capsys.readouterr().out
