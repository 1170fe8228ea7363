"""Shared test fixtures."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def mirror() -> Path:
    """The offline release copies (``NFEVAL_MIRROR``); tests using it skip without it."""
    env = os.environ.get("NFEVAL_MIRROR")
    if not env or not Path(env).is_dir():
        pytest.skip("NFEVAL_MIRROR is not set to the release mirror (make test sets it when ../shared/data exists)")
    return Path(env)
