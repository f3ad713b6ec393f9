"""Back-office forms and the OAuth client write path the admin and `seed_demo` share.

The OAuth client functions are services in the STYLE.md sense (keyword-only, atomic, validated);
they live here rather than in `accounts/services.py` only because that module has another owner
while this is written.
"""

from django import forms
from django.conf import settings
from django.contrib.auth.forms import UserCreationForm
from django.contrib.auth.hashers import check_password
from django.db import transaction
from oauth2_provider.generators import generate_client_secret
from oauth2_provider.models import Application

from accounts.models import OAuthClientProfile, User

# --- OAuth clients ---------------------------------------------------------------------------


def _profile_of(application: Application) -> OAuthClientProfile:
    profile = OAuthClientProfile.objects.filter(application=application).first()
    return profile or OAuthClientProfile(application=application)


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
    profile.full_clean()
    profile.save()
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
    """Change a client's registration. The secret is untouched (see `oauth_client_reset_secret`)."""
    application.name = name
    application.redirect_uris = redirect_uris
    application.client_type = client_type
    application.full_clean()
    application.save()
    profile = _profile_of(application)
    profile.logo, profile.app_link, profile.scope_ceiling = logo, app_link, scope_ceiling
    profile.suspended = suspended
    profile.full_clean()
    profile.save()
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
    profile = _profile_of(application)
    profile.suspended = suspended
    profile.full_clean()
    profile.save()
    return profile


def scope_choices() -> list[tuple[str, str]]:
    return [(scope, f"{scope}: {description}") for scope, description in settings.SCOPES.items()]


class OAuthClientForm(forms.ModelForm):
    """One form over DOT's Application and our profile: what the operator registers (contract §3)."""

    logo = forms.URLField(required=False, assume_scheme="https", help_text="URL of the logo shown on the consent page.")
    app_link = forms.URLField(required=False, assume_scheme="https", help_text="The application's home page.")
    scope_ceiling = forms.MultipleChoiceField(
        choices=scope_choices,
        widget=forms.CheckboxSelectMultiple,
        help_text="The scopes this client may ask for; asking for more is refused with invalid_scope.",
    )
    suspended = forms.BooleanField(
        required=False,
        help_text="A suspended client cannot obtain tokens, and the tokens it holds stop working at once.",
    )

    class Meta:
        model = Application
        fields = ["name", "redirect_uris", "client_type"]
        widgets = {"redirect_uris": forms.Textarea(attrs={"rows": 3, "cols": 80})}
        help_texts = {
            "redirect_uris": "One per line (or separated by spaces). The authorize request's redirect_uri "
            "must equal one of them exactly.",
            "client_type": "Confidential: a server that keeps the secret. Public: a browser or mobile app "
            "(no secret; must use PKCE).",
        }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["name"].required = True
        self.fields["redirect_uris"].required = True
        # Model validation (DOT's Application.clean) needs to know the grant before saving.
        self.instance.authorization_grant_type = Application.GRANT_AUTHORIZATION_CODE
        if self.instance.pk:
            profile = _profile_of(self.instance)
            self.initial.update(
                logo=profile.logo,
                app_link=profile.app_link,
                scope_ceiling=profile.scope_ceiling,
                suspended=profile.suspended,
            )
            self.initial["redirect_uris"] = "\n".join(self.instance.redirect_uris.split())

    def clean_redirect_uris(self) -> str:
        return " ".join(self.cleaned_data["redirect_uris"].split())

    def profile_values(self) -> dict:
        data = self.cleaned_data
        return {
            "logo": data["logo"],
            "app_link": data["app_link"],
            "scope_ceiling": [scope for scope in settings.SCOPES if scope in data["scope_ceiling"]],
            "suspended": data["suspended"],
        }


# --- Users -----------------------------------------------------------------------------------


class UserAddForm(UserCreationForm):
    """The admin's add-user form also asks for the e-mail address, which is unique and required."""

    class Meta(UserCreationForm.Meta):
        model = User
        fields = ("username", "email", "name")
