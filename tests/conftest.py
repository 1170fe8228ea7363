"""The library's tests: the fixtures (shared with the reproduction's tests, src/repro/tests)
live in ``testkit``.

Nothing here turns a failure into a skip: a test that needs an optional package says so
itself (``testkit.needs``, ``pytest.importorskip``, the ``models_extra`` and
``plot_extra`` fixtures), so in a core install (``pip install nfeval`` plus pytest:
``.ci/wheel_tests``) those tests are skipped with the extra to install and any other error
fails. Checkout files are found from each test file's own place
(``Path(__file__).resolve().parents[1]``), not through ``nfeval.paths``, so the same tests
run against an installed wheel.
"""

from __future__ import annotations

from testkit import (  # noqa: F401 -- the fixtures every test here may use
    mirror,
    models_extra,
    plot_extra,
    tiny_gpt2,
    tiny_gpt2_dir,
    tiny_gpt2_wide,
    tiny_gpt2_wide_dir,
)
