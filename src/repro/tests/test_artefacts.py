"""The reproduction's command (``python -m nfeval_repro.artefacts``): its catalogue. The
library's command has none (tests/test_cli.py)."""


def test_artefacts_lists_catalogue(capsys):
    from nfeval_repro.artefacts import main as artefacts

    assert artefacts([]) == 0
    out = capsys.readouterr().out
    assert "lk_t01" in out and "dq_eq7" in out
