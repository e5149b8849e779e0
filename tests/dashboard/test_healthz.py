import pytest
from django.test import override_settings


def test_healthz_answers_over_plain_http_under_https_redirect(client, db):
    with override_settings(SECURE_SSL_REDIRECT=True, SECURE_REDIRECT_EXEMPT=[r"^healthz$"]):
        assert client.get("/healthz").json() == {"status": "ok"}
        assert client.get("/login/").status_code == 301


@pytest.mark.parametrize(
    "path",
    ["/api/v1/outputs/abc/", "/api/v1/queue/null%2Cnull/heartbeat/", "/api/v1/nothing-here/"],
)
def test_a_path_no_api_route_matches_is_a_json_404(client, path):
    response = client.get(path)
    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert response.json() == {"detail": "Not found."}


@pytest.mark.django_db
def test_a_page_no_route_matches_stays_html(client):
    response = client.get("/no-such-page/")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")
