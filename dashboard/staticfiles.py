"""Static files that come from installed packages rather than from ``static/``.

plotly.js is served from our own static files, never from a CDN, and in the version that
the installed plotly.py writes figures for. This finder shows the package's copy to
Django as ``vendor/plotly.min.js``, so that WhiteNoise serves it straight from the finders
in development and ``collectstatic`` copies it (with a hashed name) into the image.
"""

from pathlib import Path

import plotly
from django.contrib.staticfiles.finders import BaseFinder
from django.core.checks import Error
from django.core.files.storage import FileSystemStorage

PREFIX = "vendor"
PACKAGE_DATA = Path(plotly.__file__).resolve().parent / "package_data"
# Only these files of package_data, under PREFIX with the same names.
NAMES = ("plotly.min.js",)


class VendorFinder(BaseFinder):
    """Finds the files NAMES of plotly's package_data as ``vendor/<name>``."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.storage = FileSystemStorage(location=PACKAGE_DATA)
        # collectstatic and WhiteNoise put a storage's files under its prefix.
        self.storage.prefix = PREFIX

    def check(self, **kwargs):
        return [
            Error(
                f"{PACKAGE_DATA / name} is missing: is plotly installed whole?", id="dashboard.E001"
            )
            for name in NAMES
            if not (PACKAGE_DATA / name).is_file()
        ]

    def find(self, path, find_all=False, **kwargs):
        prefix, _, name = path.partition("/")
        if prefix != PREFIX or name not in NAMES:
            # An empty list, not None: django.contrib.staticfiles.finders.find takes None
            # for a match.
            return []
        found = str(PACKAGE_DATA / name)
        return [found] if find_all else found

    def list(self, ignore_patterns):
        for name in NAMES:
            yield name, self.storage
