"""plotly.js from the plotly package and Tom Select from django-tomselect, served as our own
static files and collected for the image."""

import hashlib
import json

import pytest
from django.conf import settings
from django.contrib.staticfiles import finders
from django.core.management import call_command
from django.templatetags.static import static
from django.test import override_settings

from dashboard.staticfiles import FILES, VendorFinder

PLOTLY_JS = FILES["plotly.min.js"]
TOM_SELECT_JS = FILES["django-tomselect.min.js"]


def digest(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


def test_the_finder_finds_the_vendor_files_and_nothing_else_of_the_packages():
    assert finders.find("vendor/plotly.min.js") == str(PLOTLY_JS)
    assert finders.find("vendor/django-tomselect.min.js") == str(TOM_SELECT_JS)
    assert finders.find("vendor/widgetbundle.js") is None
    assert finders.find("vendor/django-tomselect.js") is None
    assert finders.find("plotly.min.js") is None
    assert [name for name, _ in VendorFinder().list(None)] == [
        "plotly.min.js",
        "django-tomselect.min.js",
        "django-tomselect.min.js.map",
        "tom-select.default.min.css",
    ]


def test_the_finder_passes_its_check():
    assert VendorFinder().check() == []


@pytest.mark.django_db
def test_plotly_js_is_served_from_our_static_files(client):
    response = client.get("/static/vendor/plotly.min.js")
    assert response.status_code == 200
    assert "javascript" in response["Content-Type"]
    assert digest(b"".join(response.streaming_content)) == digest(PLOTLY_JS.read_bytes())


@pytest.mark.django_db
def test_tom_select_is_served_from_our_static_files(client):
    response = client.get("/static/vendor/django-tomselect.min.js")
    assert response.status_code == 200
    assert digest(b"".join(response.streaming_content)) == digest(TOM_SELECT_JS.read_bytes())
    assert client.get("/static/vendor/tom-select.default.min.css").status_code == 200


@pytest.mark.django_db
def test_charts_js_is_served_from_our_static_files(client):
    response = client.get("/static/js/charts.js")
    assert response.status_code == 200
    assert "javascript" in response["Content-Type"]


def test_collectstatic_collects_plotly_js(tmp_path):
    with override_settings(STATIC_ROOT=tmp_path):
        call_command("collectstatic", interactive=False, verbosity=0)
    collected = tmp_path / "vendor" / "plotly.min.js"
    assert digest(collected.read_bytes()) == digest(PLOTLY_JS.read_bytes())
    assert (tmp_path / "js" / "charts.js").is_file()
    assert (tmp_path / "vendor" / "tom-select.default.min.css").is_file()


def test_production_storage_collects_plotly_js_under_a_hashed_name(tmp_path):
    # As the Dockerfile's collectstatic, with production's storage: only our finders, to
    # keep the test short.
    production = {
        "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
        "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
    }
    ours = [
        "django.contrib.staticfiles.finders.FileSystemFinder",
        "dashboard.staticfiles.VendorFinder",
    ]
    with override_settings(STATIC_ROOT=tmp_path, STORAGES=production, STATICFILES_FINDERS=ours):
        finders.get_finder.cache_clear()
        try:
            call_command("collectstatic", interactive=False, verbosity=0)
            url = static("vendor/plotly.min.js")
        finally:
            finders.get_finder.cache_clear()
    hashed = json.loads((tmp_path / "staticfiles.json").read_text())["paths"][
        "vendor/plotly.min.js"
    ]
    assert url == f"/static/{hashed}"
    assert digest((tmp_path / hashed).read_bytes()) == digest(PLOTLY_JS.read_bytes())
    assert (tmp_path / f"{hashed}.gz").is_file()
    # The bundle names its source map, which the manifest storage must find to hash it.
    assert (
        "vendor/django-tomselect.min.js"
        in json.loads((tmp_path / "staticfiles.json").read_text())["paths"]
    )


def test_charts_js_draws_responsive_charts_without_the_logo_also_after_htmx_swaps():
    script = (settings.BASE_DIR / "static" / "js" / "charts.js").read_text()
    assert "Plotly.newPlot(element, figure.data, figure.layout, CONFIG)" in script
    assert "responsive: true," in script and "displaylogo: false," in script
    assert '"htmx:afterSettle"' in script
