"""What the operator sees: the service's name, a "View site" that exists, only the models the service
uses, clients that cannot authorize flagged, and forms that fit what they hold."""

import pytest
from django.contrib import admin
from django.contrib.auth.models import Group
from django.test import override_settings
from django.urls import reverse

from accounts.tests.factories import ApplicationFactory, UserFactory
from tests.test_admin_site import GrantFactory

pytestmark = pytest.mark.django_db


def test_header_and_title_carry_the_service_name_and_view_site_leads_to_the_api_docs(operator_client, settings):
    page = operator_client.get(reverse("admin:index")).content.decode()

    assert f"<title>Operations | {settings.SERVICE_NAME} back office</title>" in page
    assert f'<a href="{reverse("admin:index")}">{settings.SERVICE_NAME} back office</a>' in page
    assert "Django administration" not in page
    assert 'href="/v1/docs"' in page
    assert operator_client.get("/v1/docs").status_code == 200


def test_groups_are_not_offered_because_the_service_never_consults_them(operator_client):
    assert Group not in admin.site._registry
    page = operator_client.get(reverse("admin:index")).content.decode()
    assert "/admin/auth/group/" not in page
    user_page = operator_client.get(reverse("admin:accounts_user_change", args=[UserFactory().pk]))
    assert "groups" not in user_page.context["adminform"].form.fields


@pytest.mark.parametrize("model", ["grant", "idtoken"])
def test_codes_and_id_tokens_are_read_only_and_say_why(operator_client, model):
    changelist = operator_client.get(reverse(f"admin:oauth2_provider_{model}_changelist"))

    assert changelist.status_code == 200
    assert 'class="help explanation"' in changelist.content.decode()
    assert operator_client.get(reverse(f"admin:oauth2_provider_{model}_add")).status_code == 403


def test_an_authorization_code_cannot_be_edited(operator_client):
    grant = GrantFactory()

    response = operator_client.post(
        reverse("admin:oauth2_provider_grant_change", args=[grant.pk]), {"redirect_uri": "https://evil.example/"}
    )

    assert response.status_code == 403
    grant.refresh_from_db()
    assert grant.redirect_uri == "http://127.0.0.1:8765/callback"
    page = operator_client.get(reverse("admin:oauth2_provider_grant_change", args=[grant.pk])).content.decode()
    assert "at most 10 minutes" in page


def test_view_on_site_of_a_client_is_its_app_link_not_a_broken_page(operator_client):
    with_link = ApplicationFactory(profile__app_link="https://app.example/home")
    without_link = ApplicationFactory(profile__app_link="")

    page = operator_client.get(reverse("admin:oauth2_provider_application_change", args=[with_link.pk]))
    assert page.context["absolute_url"] == "https://app.example/home"
    page = operator_client.get(reverse("admin:oauth2_provider_application_change", args=[without_link.pk]))
    assert not page.context["has_absolute_url"]


def client_without_profile():
    application = ApplicationFactory(name="Shell Registered")
    application.profile.delete()
    application.refresh_from_db()
    return application


def test_client_list_flags_clients_without_a_scope_ceiling(operator_client):
    bare = client_without_profile()
    empty = ApplicationFactory(name="Empty Ceiling", profile__scope_ceiling=[])
    ready = ApplicationFactory(name="Ready Client", profile__scope_ceiling=["READ_PROFILE"])
    url = reverse("admin:oauth2_provider_application_changelist")

    page = operator_client.get(url).content.decode()
    assert page.count("none: every request fails (invalid_scope)") == 2

    missing = operator_client.get(url, {"ceiling": "missing"}).context["cl"].result_list
    assert {application.pk for application in missing} == {bare.pk, empty.pk}
    complete = operator_client.get(url, {"ceiling": "set"}).context["cl"].result_list
    assert [application.pk for application in complete] == [ready.pk]


def test_client_page_warns_when_the_client_cannot_authorize_and_saving_scopes_fixes_it(operator_client):
    bare = client_without_profile()
    url = reverse("admin:oauth2_provider_application_change", args=[bare.pk])

    page = operator_client.get(url)
    assert "every authorization request it makes fails with invalid_scope" in page.content.decode()

    response = operator_client.post(
        url,
        {
            "name": bare.name,
            "redirect_uris": bare.redirect_uris,
            "client_type": bare.client_type,
            "logo": "",
            "app_link": "",
            "scope_ceiling": ["READ_PROFILE"],
        },
    )
    assert response.status_code == 302
    bare.refresh_from_db()
    assert bare.profile.scope_ceiling == ["READ_PROFILE"]
    assert "fails with invalid_scope" not in operator_client.get(url).content.decode()


def test_url_inputs_are_wide_and_the_secret_button_is_styled_as_an_object_tool(operator_client):
    application = ApplicationFactory()

    page = operator_client.get(reverse("admin:oauth2_provider_application_change", args=[application.pk]))

    form = page.context["adminform"].form
    for field in ("logo", "app_link"):
        attrs = form.fields[field].widget.attrs
        assert "vURLField" in attrs["class"]
        assert int(attrs["size"]) >= 80
    html = page.content.decode()
    assert 'class="objecttool-button" id="issue-new-secret"' in html
    assert ".object-tools button.objecttool-button" in html


@override_settings(SERVICE_NAME="Acme Scheduling")
def test_the_header_follows_the_service_name_setting(operator_client):
    page = operator_client.get(reverse("admin:index")).content.decode()
    assert "<title>Operations | Acme Scheduling back office</title>" in page
