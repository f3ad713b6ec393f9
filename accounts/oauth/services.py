"""Writes of the OAuth provider: remembering redeemed codes, revoking on replay, ending an app's access."""

import uuid

from django.db import transaction
from oauth2_provider.models import AccessToken, Application, Grant, RefreshToken

from accounts.models import OAuthCodeRedemption, User


def oauth_code_redemption_record(
    *, code_checksum: str, application: Application, user: User, token_family: uuid.UUID | None, scope: str
) -> OAuthCodeRedemption:
    """Remember which token family a code produced, so that a replay of the code can end it."""
    redemption = OAuthCodeRedemption(
        code_checksum=code_checksum, application=application, user=user, token_family=token_family, scope=scope
    )
    redemption.full_clean(validate_unique=False)
    redemption.save()
    return redemption


@transaction.atomic
def oauth_code_replay_revoke(*, code_checksum: str, application: Application | None) -> bool:
    """A code was presented again: revoke everything issued from it (RFC 6749 §4.1.2).

    Returns whether the code was a replay at all (an unknown code revokes nothing).
    """
    if application is None:
        return False
    redemption = OAuthCodeRedemption.objects.filter(code_checksum=code_checksum, application=application).first()
    if redemption is None:
        return False
    if redemption.token_family is not None:
        RefreshToken.revoke_family(redemption.token_family)
    return True


@transaction.atomic
def oauth_app_access_revoke(*, user: User, application: Application) -> None:
    """End every token and pending code `application` holds for `user`, at once.

    This is the connected-apps page's "Revoke access": the app must sign the user in again.
    """
    families = (
        RefreshToken.objects.filter(user=user, application=application, revoked__isnull=True)
        .exclude(token_family=None)
        .values_list("token_family", flat=True)
        .distinct()
    )
    for family in list(families):
        RefreshToken.revoke_family(family)
    for refresh_token in RefreshToken.objects.filter(user=user, application=application, revoked__isnull=True):
        refresh_token.revoke()
    AccessToken.objects.filter(user=user, application=application).delete()
    Grant.objects.filter(user=user, application=application).delete()
