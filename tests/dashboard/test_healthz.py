from django.test import override_settings


def test_healthz_answers_over_plain_http_under_https_redirect(client, db):
    with override_settings(SECURE_SSL_REDIRECT=True, SECURE_REDIRECT_EXEMPT=[r"^healthz$"]):
        assert client.get("/healthz").json() == {"status": "ok"}
        assert client.get("/login/").status_code == 301
