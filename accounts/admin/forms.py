"""Back-office forms: the OAuth client registration form and the add-user form.

The OAuth client writes themselves are services in `accounts.oauth.services`, shared with the
`createoauthclient` command and the demo data.
"""

from django import forms
from django.conf import settings
from django.contrib.auth.forms import UserCreationForm
from oauth2_provider.models import Application

from accounts.models import User
from accounts.oauth.services import oauth_client_profile

# --- OAuth clients ---------------------------------------------------------------------------


def scope_choices() -> list[tuple[str, str]]:
    return [(scope, f"{scope}: {description}") for scope, description in settings.SCOPES.items()]


class OAuthClientForm(forms.ModelForm):
    """One form over DOT's Application and our profile: what the operator registers (docs/oauth.md)."""

    logo = forms.URLField(
        required=False,
        assume_scheme="https",
        max_length=2048,
        widget=forms.URLInput(attrs={"class": "vURLField oauth-url", "size": 80}),
        help_text="URL of the logo shown on the consent page.",
    )
    app_link = forms.URLField(
        required=False,
        assume_scheme="https",
        max_length=2048,
        widget=forms.URLInput(attrs={"class": "vURLField oauth-url", "size": 80}),
        help_text="The application's home page, linked from the consent page.",
    )
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
            profile = oauth_client_profile(self.instance)
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
