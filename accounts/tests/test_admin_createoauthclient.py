"""`manage.py createoauthclient` registers a client completely (profile and scope ceiling included),
through the same service as the admin, or refuses clearly and saves nothing."""

import subprocess
import sys
from io import StringIO

import pytest
from django.contrib.auth.hashers import check_password
from django.core.management import CommandError, call_command
from oauth2_provider.models import Application

from accounts.models import OAuthClientProfile

pytestmark = pytest.mark.django_db


def run(*arguments):
    stdout, stderr = StringIO(), StringIO()
    call_command("createoauthclient", *arguments, stdout=stdout, stderr=stderr)
    return stdout.getvalue(), stderr.getvalue()


def printed_values(stdout: str) -> dict:
    return {key.strip(): value.strip() for key, value in (line.split(":", 1) for line in stdout.splitlines())}


def test_registers_a_confidential_client_with_its_ceiling_and_prints_the_secret_once():
    stdout, stderr = run(
        "--name",
        "Reporting App",
        "--redirect-uri",
        "https://reports.example/callback",
        "--redirect-uri",
        "http://127.0.0.1:9000/cb",
        "--scopes",
        "READ_BOOKING, READ_PROFILE",
        "--logo",
        "https://reports.example/logo.png",
        "--link",
        "https://reports.example",
    )

    values = printed_values(stdout)
    application = Application.objects.get(client_id=values["client_id"])
    assert application.name == "Reporting App"
    assert application.redirect_uris.split() == ["https://reports.example/callback", "http://127.0.0.1:9000/cb"]
    assert application.client_type == Application.CLIENT_CONFIDENTIAL
    assert application.authorization_grant_type == Application.GRANT_AUTHORIZATION_CODE
    assert check_password(values["client_secret"], application.client_secret)
    assert values["client_secret"] not in application.client_secret
    assert application.profile.scope_ceiling == ["READ_PROFILE", "READ_BOOKING"]
    assert (application.profile.logo, application.profile.app_link) == (
        "https://reports.example/logo.png",
        "https://reports.example",
    )
    assert "not shown again" in stderr


def test_registers_a_public_client_without_printing_a_secret():
    stdout, _ = run(
        "--name", "Mobile", "--redirect-uri", "https://m.example/cb", "--scopes", "READ_PROFILE", "--public"
    )

    values = printed_values(stdout)
    application = Application.objects.get(client_id=values["client_id"])
    assert application.client_type == Application.CLIENT_PUBLIC
    assert values["client_secret"].startswith("none")


GOOD = {"--name": "X", "--redirect-uri": "https://x.example/cb", "--scopes": "READ_PROFILE"}


def arguments_with(**changes) -> list[str]:
    """GOOD with some options replaced (a value) or left out (None); `redirect_uri` is `--redirect-uri`."""
    options = {**GOOD, **{f"--{name.replace('_', '-')}": value for name, value in changes.items()}}
    return [part for option, value in options.items() if value is not None for part in (option, value)]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (arguments_with(scopes="READ_PROFILE READ_EVERYTHING"), "Unknown scope(s): READ_EVERYTHING"),
        (arguments_with(scopes=" , "), "at least one"),
        (arguments_with(redirect_uri="not a uri"), "redirect_uris"),
        (arguments_with(redirect_uri="https://x.example/cb#fragment"), "redirect_uris"),
        (arguments_with(logo="nope"), "logo"),
        (arguments_with(name="  "), "name"),
        (arguments_with(name=None), "--name"),
        (arguments_with(redirect_uri=None), "--redirect-uri"),
    ],
)
def test_bad_arguments_are_refused_clearly_and_nothing_is_saved(arguments, message):
    with pytest.raises(CommandError) as refused:
        run(*arguments)

    assert message in str(refused.value)
    assert not Application.objects.exists()
    assert not OAuthClientProfile.objects.exists()


def test_bad_arguments_exit_non_zero_from_the_command_line():
    result = subprocess.run(
        [
            sys.executable,
            "manage.py",
            "createoauthclient",
            "--name",
            "X",
            "--redirect-uri",
            "https://x.example/cb",
            "--scopes",
            "READ_NOTHING",
        ],
        capture_output=True,
        text=True,
        check=False,
    )

    assert result.returncode != 0
    assert "Unknown scope(s): READ_NOTHING" in result.stderr
