"""Register an OAuth client completely from the command line, as the admin's form does.

DOT's own `createapplication` makes a bare Application without this service's profile, so such a
client has no scope ceiling and every authorization it asks for fails with invalid_scope. This
command goes through the same service as the admin (`accounts.oauth.services`).
"""

import re

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from oauth2_provider.models import Application

from accounts.oauth.services import oauth_client_register


def _messages(error: ValidationError) -> list[str]:
    if hasattr(error, "error_dict"):
        return [f"{field}: {message}" for field, errors in error.message_dict.items() for message in errors]
    return list(error.messages)


class Command(BaseCommand):
    help = (
        "Register an OAuth client (authorization code grant) with its redirect URIs and scope ceiling, "
        "and print its client id and secret. The secret is shown this once; only its hash is stored."
    )

    def add_arguments(self, parser):
        parser.add_argument("--name", required=True, help="Shown to users on the consent page.")
        parser.add_argument(
            "--redirect-uri",
            dest="redirect_uris",
            action="append",
            required=True,
            help="A redirect URI the client may use; repeat the option for several.",
        )
        parser.add_argument(
            "--scopes",
            required=True,
            help=f"The scopes the client may ask for, space- or comma-separated: {', '.join(settings.SCOPES)}.",
        )
        parser.add_argument("--logo", default="", help="URL of the logo shown on the consent page.")
        parser.add_argument("--link", default="", help="The application's home page.")
        parser.add_argument(
            "--public",
            action="store_true",
            help="A browser or mobile app that cannot keep a secret (no secret; must use PKCE).",
        )

    def handle(self, *args, name, redirect_uris, scopes, logo, link, public, **options):
        requested = [scope for scope in re.split(r"[\s,]+", scopes) if scope]
        unknown = [scope for scope in requested if scope not in settings.SCOPES]
        if unknown:
            raise CommandError(f"Unknown scope(s): {', '.join(unknown)}. Known scopes: {', '.join(settings.SCOPES)}.")
        if not requested:
            raise CommandError(f"--scopes needs at least one of: {', '.join(settings.SCOPES)}.")
        client_type = Application.CLIENT_PUBLIC if public else Application.CLIENT_CONFIDENTIAL
        try:
            application, clear_secret = oauth_client_register(
                name=name,
                redirect_uris=" ".join(redirect_uris),
                client_type=client_type,
                logo=logo,
                app_link=link,
                scope_ceiling=[scope for scope in settings.SCOPES if scope in requested],
            )
        except ValidationError as error:
            raise CommandError("The client was not registered:\n  " + "\n  ".join(_messages(error))) from error
        self.stdout.write(f"client_id:     {application.client_id}")
        if public:
            self.stdout.write("client_secret: none (public client: it authenticates with PKCE)")
        else:
            self.stdout.write(f"client_secret: {clear_secret}")
        self.stderr.write(
            f"OAuth client #{application.pk} '{application.name}' registered with scopes "
            f"{' '.join(application.profile.scope_ceiling)}."
            + ("" if public else " Store the secret now: it is not shown again.")
        )
