"""The wheel carries the lab's templates, static files and demo sessions
inside the `loopguard_site` package (the repository keeps them at its top
level; settings.ASSETS_DIR finds either), so the lab installed from a wheel
(`pip install 'loopguard[lab]'`) serves its pages and loads its demo.
Everything else about the build is in pyproject.toml."""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
LAB_ASSETS = ("templates", "static", "fixtures/demo")


class BuildWithLabAssets(build_py):
    def run(self):
        super().run()
        if self.editable_mode:  # an editable install reads the top-level folders
            return
        for name in LAB_ASSETS:
            target = Path(self.build_lib) / "loopguard_site" / name
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(ROOT / name, target, ignore=shutil.ignore_patterns("__pycache__"))


setup(cmdclass={"build_py": BuildWithLabAssets})
