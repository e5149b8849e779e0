"""Static files that come from installed packages rather than from ``static/``.

Nothing is loaded from a CDN: each file is served from our own static files, in the version
the lock files pin. This finder shows the packages' copies to Django under ``vendor/``, so
that WhiteNoise serves them straight from the finders in development and ``collectstatic``
copies them (with hashed names) into the image:

* plotly.js, in the version that the installed plotly.py writes figures for;
* Tom Select, for the filter bar's searchable multi-selects (static/js/filter-bar.js), from
  django-tomselect's build: its bundle defines ``window.TomSelect`` and, on its own, neither
  starts a widget nor fetches anything (its autocomplete code runs only for its Django
  widgets, which we do not use). Its source map comes too, because the bundle names it and
  the manifest storage of production refuses a reference to a missing file.
"""

from pathlib import Path

import django_tomselect
import plotly
from django.contrib.staticfiles.finders import BaseFinder
from django.core.checks import Error
from django.core.files.storage import FileSystemStorage

PREFIX = "vendor"
_PLOTLY = Path(plotly.__file__).resolve().parent / "package_data"
_TOMSELECT = Path(django_tomselect.__file__).resolve().parent / "static" / "django_tomselect"
# Only these files of the packages, under PREFIX with the same names (each key is its
# file's name).
FILES = {
    "plotly.min.js": _PLOTLY / "plotly.min.js",
    "django-tomselect.min.js": _TOMSELECT / "js" / "django-tomselect.min.js",
    "django-tomselect.min.js.map": _TOMSELECT / "js" / "django-tomselect.min.js.map",
    "tom-select.default.min.css": _TOMSELECT
    / "vendor"
    / "tom-select"
    / "css"
    / "tom-select.default.min.css",
}


class VendorFinder(BaseFinder):
    """Finds the packages' FILES as ``vendor/<name>``."""

    def check(self, **kwargs):
        return [
            Error(f"{path} is missing: is its package installed whole?", id="dashboard.E001")
            for path in FILES.values()
            if not path.is_file()
        ]

    def find(self, path, find_all=False, **kwargs):
        prefix, _, name = path.partition("/")
        if prefix != PREFIX or name not in FILES:
            # An empty list, not None: django.contrib.staticfiles.finders.find takes None
            # for a match.
            return []
        found = str(FILES[name])
        return [found] if find_all else found

    def list(self, ignore_patterns):
        for path in FILES.values():
            # A storage per file, at its own folder: the file's name there is its name
            # under PREFIX, where collectstatic and WhiteNoise put a storage's files.
            storage = FileSystemStorage(location=path.parent)
            storage.prefix = PREFIX
            yield path.name, storage
