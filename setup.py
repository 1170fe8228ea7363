"""Build hook: copy the files scoring reads into the package (``nfeval/_data``).

The repository keeps one copy of the project's prompts, the papers' values and
the DebateQA sample at the top level (``prompts/``, ``data/``); a wheel carries
them inside the package, where :func:`nfeval.paths.package_data` finds them
when no checkout is around. Everything else is in ``pyproject.toml``.
"""

import importlib.util
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent


def _shipped() -> dict[str, str]:
    """nfeval.paths.PACKAGE_DATA (name under nfeval/_data -> folder of the checkout)."""
    spec = importlib.util.spec_from_file_location("_nfeval_paths", HERE / "src/nfeval/paths.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.PACKAGE_DATA


class BuildWithData(build_py):
    def run(self):
        super().run()
        if self.editable_mode:  # an editable install reads the checkout itself
            return
        target = Path(self.build_lib) / "nfeval" / "_data"
        for name, folder in _shipped().items():
            source = HERE / folder
            if not source.is_dir():
                raise SystemExit(f"setup.py: {source} is missing; build from a full checkout")
            shutil.copytree(source, target / name, dirs_exist_ok=True)


setup(cmdclass={"build_py": BuildWithData})
