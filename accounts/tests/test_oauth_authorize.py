"""`GET/POST /auth/oauth2/authorize` (docs/oauth.md, step 1), through Django's test client."""

from urllib.parse import urlsplit

import pytest
from oauth2_provider.models import Application, Grant

from accounts.tests.factories import ApplicationFactory, UserFactory
from accounts.tests.oauth_support import authorize_url, pkce_pair, redirect_params, sign_in

pytestmark = pytest.mark.django_db


@pytest.fixture
def user():
    return UserFactory()


@pytest.fixture
def application():
    return ApplicationFactory(name="Calendar Sync", redirect_uris="https://client.example/callback")


@pytest.fixture
def signed_in(client, user):
    sign_in(client, user)
    return client


def test_anonymous_user_is_sent_to_sign_in_and_back(client, application):
    url = authorize_url(application, scope="READ_PROFILE", state="s1")
    response = client.get(url)
    assert response.status_code == 302
    location = urlsplit(response["Location"])
    assert location.path == "/auth/login"
    assert "next=" in location.query
    assert Grant.objects.count() == 0


def test_sign_in_page_returns_to_the_authorization_request(client, user, application):
    url = authorize_url(application, scope="READ_PROFILE", state="s1")
    page = client.get("/auth/login", {"next": url})
    assert page.status_code == 200
    assert page["Content-Security-Policy"] == "frame-ancestors 'none'"
    response = client.post(
        "/auth/login", {"username": user.username, "password": "correct horse battery staple", "next": url}
    )
    assert response.status_code == 302
    assert response["Location"] == url


def test_sign_in_with_a_wrong_password_shows_an_error(client, user):
    response = client.post("/auth/login", {"username": user.username, "password": "wrong"})
    assert response.status_code == 200
    assert b"did not match" in response.content
    assert "_auth_user_id" not in client.session


def test_consent_page_shows_app_account_host_and_one_line_per_scope(signed_in, user, application):
    response = signed_in.get(authorize_url(application, scope="READ_PROFILE,WRITE_SCHEDULE", state="s1"))
    assert response.status_code == 200
    page = response.content.decode()
    assert "Calendar Sync" in page
    assert 'href="https://example.com"' in page  # app link
    assert 'src="https://example.com/logo.png"' in page  # logo
    assert "client.example" in page  # redirect host
    assert user.username in page
    assert "Read your profile: name, username, e-mail address and time zone" in page
    assert "Create, change and delete your schedules" in page
    assert page.count("<li data-scope=") == 2
    assert 'value="allow"' in page and 'value="deny"' in page


def test_consent_page_cannot_be_framed(signed_in, application):
    response = signed_in.get(authorize_url(application, scope="READ_PROFILE"))
    assert response["X-Frame-Options"] == "DENY"
    assert response["Content-Security-Policy"] == "frame-ancestors 'none'"


def test_allow_redirects_with_code_and_state_echoed_exactly(signed_in, application):
    state = "a b&c=d/é?%"
    response = signed_in.post(authorize_url(application, scope="READ_PROFILE", state=state), {"decision": "allow"})
    params = redirect_params(response)
    assert response["Location"].startswith("https://client.example/callback?")
    assert params["state"] == state
    grant = Grant.objects.get()
    assert params["code"] == grant.code
    assert grant.scope == "READ_PROFILE"


def test_response_type_code_is_accepted_too(signed_in, application):
    response = signed_in.post(authorize_url(application, response_type="code", state="s"), {"decision": "allow"})
    assert "code" in redirect_params(response)


def test_missing_scope_falls_back_to_read_profile(signed_in, application):
    signed_in.post(authorize_url(application, state="s"), {"decision": "allow"})
    assert Grant.objects.get().scope == "READ_PROFILE"


def test_deny_redirects_with_access_denied_and_state(signed_in, application):
    response = signed_in.post(authorize_url(application, scope="READ_PROFILE", state="s 1"), {"decision": "deny"})
    params = redirect_params(response)
    assert params["error"] == "access_denied"
    assert params["state"] == "s 1"
    assert "code" not in params
    assert Grant.objects.count() == 0


def test_scopes_may_be_comma_or_space_separated(signed_in, application):
    signed_in.post(authorize_url(application, scope="READ_PROFILE, READ_BOOKING"), {"decision": "allow"})
    signed_in.post(authorize_url(application, scope="READ_PROFILE READ_SCHEDULE"), {"decision": "allow"})
    assert sorted(Grant.objects.values_list("scope", flat=True)) == [
        "READ_PROFILE READ_BOOKING",
        "READ_PROFILE READ_SCHEDULE",
    ]


@pytest.mark.parametrize("client_id", ["no-such-client", ""])
def test_unknown_client_is_an_error_page_never_a_redirect(signed_in, application, client_id):
    response = signed_in.get(authorize_url(application, client_id=client_id, scope="READ_PROFILE"))
    assert response.status_code == 400
    assert "Location" not in response
    assert b"cannot be completed" in response.content
    assert response["X-Frame-Options"] == "DENY"


@pytest.mark.parametrize(
    "redirect_uri",
    [
        "https://client.example/callback/",
        "https://client.example/callback?x=1",
        "https://CLIENT.example/callback",
        "https://client.example:443/callback",
        "https://evil.example/callback",
        "not a uri",
    ],
)
def test_redirect_uri_must_equal_a_registered_one_exactly(signed_in, application, redirect_uri):
    response = signed_in.get(authorize_url(application, redirect_uri=redirect_uri, scope="READ_PROFILE"))
    assert response.status_code == 400
    assert "Location" not in response
    post = signed_in.post(authorize_url(application, redirect_uri=redirect_uri), {"decision": "allow"})
    assert post.status_code == 400
    assert Grant.objects.count() == 0


def test_suspended_client_gets_an_error_page(signed_in, application):
    application.profile.suspended = True
    application.profile.save()
    response = signed_in.get(authorize_url(application, scope="READ_PROFILE"))
    assert response.status_code == 400
    assert "Location" not in response


def test_unknown_client_is_reported_before_asking_to_sign_in(client, application):
    response = client.get(authorize_url(application, client_id="nope"))
    assert response.status_code == 400


@pytest.mark.parametrize("scope", ["READ_EVERYTHING", "READ_PROFILE,ADMIN", "WRITE_WEBHOOK"])
def test_scope_outside_the_ceiling_or_unknown_redirects_with_invalid_scope(signed_in, scope):
    application = ApplicationFactory(profile__scope_ceiling=["READ_PROFILE", "READ_BOOKING"])
    response = signed_in.get(authorize_url(application, scope=scope, state="st"))
    params = redirect_params(response)
    assert params["error"] == "invalid_scope"
    assert params["state"] == "st"
    assert signed_in.post(authorize_url(application, scope=scope), {"decision": "allow"}).status_code == 302
    assert Grant.objects.count() == 0


def test_ceiling_with_write_scope_allows_its_read_scope(signed_in):
    application = ApplicationFactory(profile__scope_ceiling=["WRITE_SCHEDULE"])
    signed_in.post(authorize_url(application, scope="READ_SCHEDULE"), {"decision": "allow"})
    assert Grant.objects.get().scope == "READ_SCHEDULE"


def test_client_without_profile_may_ask_for_nothing(signed_in):
    application = ApplicationFactory(profile=None)
    application.profile.delete()
    application = Application.objects.get(pk=application.pk)
    params = redirect_params(signed_in.get(authorize_url(application, scope="READ_PROFILE")))
    assert params["error"] == "invalid_scope"


@pytest.mark.parametrize("response_type", ["token", "code token", "id_token", "none"])
def test_response_type_other_than_code_is_refused(signed_in, application, response_type):
    response = signed_in.get(authorize_url(application, response_type=response_type, state="s"))
    params = redirect_params(response)
    assert params["error"] == "unsupported_response_type"
    assert params["state"] == "s"
    assert Grant.objects.count() == 0


def test_public_client_without_pkce_is_refused_with_invalid_request(signed_in):
    application = ApplicationFactory(client_type=Application.CLIENT_PUBLIC)
    response = signed_in.post(authorize_url(application, scope="READ_PROFILE", state="s"), {"decision": "allow"})
    params = redirect_params(response)
    assert params["error"] == "invalid_request"
    assert params["state"] == "s"
    assert Grant.objects.count() == 0


@pytest.mark.parametrize("method", ["plain", None, "S512"])
def test_pkce_other_than_s256_is_refused(signed_in, application, method):
    _verifier, challenge = pkce_pair()
    url = authorize_url(application, code_challenge=challenge, code_challenge_method=method)
    params = redirect_params(signed_in.post(url, {"decision": "allow"}))
    assert params["error"] == "invalid_request"
    assert Grant.objects.count() == 0


def test_public_client_with_s256_gets_a_code_bound_to_the_challenge(signed_in):
    application = ApplicationFactory(client_type=Application.CLIENT_PUBLIC)
    _verifier, challenge = pkce_pair()
    url = authorize_url(application, code_challenge=challenge, code_challenge_method="S256")
    assert "code" in redirect_params(signed_in.post(url, {"decision": "allow"}))
    grant = Grant.objects.get()
    assert (grant.code_challenge, grant.code_challenge_method) == (challenge, "S256")


def test_codes_live_at_most_ten_minutes(signed_in, application):
    signed_in.post(authorize_url(application), {"decision": "allow"})
    grant = Grant.objects.get()
    assert 0 < (grant.expires - grant.created).total_seconds() <= 600


def test_an_unexpected_decision_counts_as_deny(signed_in, application):
    params = redirect_params(signed_in.post(authorize_url(application, state="s"), {"decision": "maybe"}))
    assert params["error"] == "access_denied"
    assert Grant.objects.count() == 0


def test_consent_post_without_csrf_token_is_refused(user, application):
    from django.test import Client

    browser = Client(enforce_csrf_checks=True)
    sign_in(browser, user)
    response = browser.post(authorize_url(application), {"decision": "allow"})
    assert response.status_code == 403
    assert Grant.objects.count() == 0
