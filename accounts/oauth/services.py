"""Writes of the OAuth provider: registering clients (the admin, `createoauthclient` and the demo
data all call these), remembering redeemed codes, revoking on replay, ending an app's access."""

import uuid

from django.conf import settings
from django.contrib.auth.hashers import check_password
from django.core.exceptions import ValidationError
from django.db import transaction
from oauth2_provider.generators import generate_client_secret
from oauth2_provider.models import AccessToken, Application, Grant, RefreshToken

from accounts.models import OAuthClientProfile, OAuthCodeRedemption, User


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


# --- Clients -------------------------------------------------------------------------------------


def oauth_client_profile(application: Application) -> OAuthClientProfile:
    """The client's profile, or an unsaved empty one for a client registered outside this service
    (DOT's `createapplication`, the shell): such a client has no scope ceiling yet."""
    profile = OAuthClientProfile.objects.filter(application=application).first()
    return profile or OAuthClientProfile(application=application)


def _validated_profile(profile: OAuthClientProfile) -> OAuthClientProfile:
    unknown = [scope for scope in profile.scope_ceiling if scope not in settings.SCOPES]
    if unknown:
        raise ValidationError(
            {"scope_ceiling": f"Unknown scope(s): {', '.join(unknown)}. Known: {', '.join(settings.SCOPES)}."}
        )
    if not profile.scope_ceiling:
        raise ValidationError({"scope_ceiling": "A client needs at least one scope, or every request is refused."})
    profile.full_clean()
    return profile


@transaction.atomic
def oauth_client_register(
    *,
    name: str,
    redirect_uris: str,
    client_type: str = Application.CLIENT_CONFIDENTIAL,
    logo: str = "",
    app_link: str = "",
    scope_ceiling: list[str],
    suspended: bool = False,
    client_id: str | None = None,
    client_secret: str | None = None,
) -> tuple[Application, str]:
    """Register a client (authorization code grant) and return it with its clear-text secret.

    DOT hashes `client_secret` when the row is saved, so the clear value is captured here, before
    the save, and handed back exactly once; nothing else can ever read it again. `client_id` and
    `client_secret` are only passed by the demo data, which wants stable, documented values.
    """
    if not name.strip():
        raise ValidationError({"name": "A client needs a name; it is shown on the consent page."})
    clear_secret = client_secret or generate_client_secret()
    application = Application(
        name=name,
        redirect_uris=redirect_uris,
        client_type=client_type,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        client_secret=clear_secret,
        hash_client_secret=True,
        skip_authorization=False,
        algorithm=Application.NO_ALGORITHM,
    )
    if client_id:
        application.client_id = client_id
    application.full_clean()
    application.save()
    profile = OAuthClientProfile(
        application=application, logo=logo, app_link=app_link, scope_ceiling=scope_ceiling, suspended=suspended
    )
    _validated_profile(profile).save()
    return application, clear_secret


@transaction.atomic
def oauth_client_update(
    *,
    application: Application,
    name: str,
    redirect_uris: str,
    client_type: str,
    logo: str,
    app_link: str,
    scope_ceiling: list[str],
    suspended: bool,
) -> Application:
    """Change a client's registration (creating its profile if it had none). The secret is
    untouched (see `oauth_client_reset_secret`)."""
    application.name = name
    application.redirect_uris = redirect_uris
    application.client_type = client_type
    application.full_clean()
    application.save()
    profile = oauth_client_profile(application)
    profile.logo, profile.app_link, profile.scope_ceiling = logo, app_link, scope_ceiling
    profile.suspended = suspended
    _validated_profile(profile).save()
    return application


@transaction.atomic
def oauth_client_reset_secret(*, application: Application, client_secret: str | None = None) -> str:
    """Issue a new secret (the old one stops working at once) and return it, the only clear copy."""
    clear_secret = client_secret or generate_client_secret()
    application.client_secret = clear_secret
    application.hash_client_secret = True
    application.save(update_fields=["client_secret", "hash_client_secret", "updated"])
    return clear_secret


def oauth_client_secret_matches(*, application: Application, client_secret: str) -> bool:
    return check_password(client_secret, application.client_secret)


@transaction.atomic
def oauth_client_set_suspended(*, application: Application, suspended: bool) -> OAuthClientProfile:
    """Suspend or reactivate a client. Its tokens stop (or resume) working on the next request,
    because every token check reads the profile's `suspended` flag."""
    profile = oauth_client_profile(application)
    profile.suspended = suspended
    profile.full_clean()
    profile.save()
    return profile
