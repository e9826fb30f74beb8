"""Serves `plotly.min.js` from the installed plotly package as
`static/plotly/plotly.min.js`, without exposing (or collecting) the rest of
the package's 10 MB `package_data` folder."""

from __future__ import annotations

from django.conf import settings
from django.contrib.staticfiles.finders import BaseFinder
from django.core.files.storage import FileSystemStorage

PREFIX = "plotly"
FILES = ("plotly.min.js",)


class PlotlyFinder(BaseFinder):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.storage = FileSystemStorage(location=settings.PLOTLY_JS_DIR)
        self.storage.prefix = PREFIX  # collectstatic puts the files under this folder

    def find(self, path: str, find_all: bool = False, **kwargs):
        prefix, _, name = path.partition("/")
        if prefix != PREFIX or name not in FILES:
            return [] if find_all else None
        found = self.storage.path(name)
        return [found] if find_all else found

    def list(self, ignore_patterns):
        for name in FILES:
            yield name, self.storage

    def check(self, **kwargs):
        from django.core.checks import Error

        missing = [name for name in FILES if not self.storage.exists(name)]
        if missing:
            message = f"plotly package files not found in {settings.PLOTLY_JS_DIR}: {missing}"
            return [Error(message, id="loopguard.E001")]
        return []
