"""OAuth clients (django-oauth-toolkit's applications) and the provider's other models in the back
office: registered through `accounts.oauth.services`, as `createoauthclient` does."""

from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.db import models
from django.http import Http404
from django.urls import path
from django.utils import timezone
from django.utils.html import format_html
from django.views.decorators.http import require_POST
from oauth2_provider.admin import AccessTokenAdmin as DOTAccessTokenAdmin
from oauth2_provider.admin import GrantAdmin as DOTGrantAdmin
from oauth2_provider.admin import IDTokenAdmin as DOTIDTokenAdmin
from oauth2_provider.admin import RefreshTokenAdmin as DOTRefreshTokenAdmin
from oauth2_provider.models import AccessToken, Application, Grant, IDToken, RefreshToken

from accounts.admin.forms import OAuthClientForm
from accounts.models import OAuthCodeRedemption
from accounts.oauth.services import (
    oauth_client_register,
    oauth_client_reset_secret,
    oauth_client_set_suspended,
    oauth_client_update,
)
from core.admin import RevealOnceAdminMixin, adopt_saved
from core.admin_scale import CONTAINS, PREFIX, PREFIX_ANY_CASE, ScaledAdminMixin, SearchField, autocomplete_filter

for model in (Application, AccessToken, RefreshToken, Grant, IDToken):
    admin.site.unregister(model)

# What staff paste to find a credential: never the token itself (the library keeps tokens out of
# the search and shows only their last characters), but whose it is. Which client issued it is a
# filter, not a search: a client holds a large share of every token, so a search by client would
# read that share to list one page.
CREDENTIAL_SEARCH = (
    SearchField("user__email", "user e-mail", PREFIX_ANY_CASE),
    SearchField("user__username", "username", PREFIX_ANY_CASE),
)
CREDENTIAL_FILTERS = (autocomplete_filter("application", "client"), autocomplete_filter("user"))


@admin.register(AccessToken)
class AccessTokenAdmin(ScaledAdminMixin, DOTAccessTokenAdmin):
    """One row per access token the provider issued (every refresh adds one): a table of millions.
    The library's admin, with its searches from indexes and its filters as autocompletes."""

    search_by = CREDENTIAL_SEARCH
    list_filter = CREDENTIAL_FILTERS


@admin.register(RefreshToken)
class RefreshTokenAdmin(ScaledAdminMixin, DOTRefreshTokenAdmin):
    search_by = CREDENTIAL_SEARCH
    list_filter = CREDENTIAL_FILTERS
    list_select_related = ("application", "user")


class ExplainedReadOnlyAdmin(admin.ModelAdmin):
    """Rows the service writes itself and the operator only looks at; `explanation` says why on the
    list and on each row's page."""

    explanation = ""
    change_list_template = "admin/explained_change_list.html"
    change_form_template = "admin/explained_change_form.html"

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def changelist_view(self, request, extra_context=None):
        return super().changelist_view(request, {"explanation": self.explanation, **(extra_context or {})})

    def change_view(self, request, object_id, form_url="", extra_context=None):
        extra_context = {"explanation": self.explanation, **(extra_context or {})}
        return super().change_view(request, object_id, form_url, extra_context)


@admin.register(Grant)
class GrantAdmin(ScaledAdminMixin, ExplainedReadOnlyAdmin, DOTGrantAdmin):
    explanation = (
        "Authorization codes waiting to be exchanged at the token endpoint. The service issues them "
        "on the consent page; each lives at most 10 minutes and is deleted when exchanged, so there "
        "is nothing to add or edit here. Deleting one makes its exchange fail with invalid_grant."
    )
    list_select_related = ("application", "user")
    search_by = CREDENTIAL_SEARCH


@admin.register(IDToken)
class IDTokenAdmin(ScaledAdminMixin, ExplainedReadOnlyAdmin, DOTIDTokenAdmin):
    explanation = (
        "OpenID Connect ID tokens. This service does not enable OpenID Connect and never issues "
        "them; the list stays empty and is shown read-only only because the OAuth library defines it."
    )
    search_by = CREDENTIAL_SEARCH
    list_filter = CREDENTIAL_FILTERS


class ScopeCeilingFilter(admin.SimpleListFilter):
    """Clients registered outside the admin (DOT's `createapplication`, the shell) have no profile,
    so no scope ceiling, and every authorization request of theirs fails with invalid_scope."""

    title = "scope ceiling"
    parameter_name = "ceiling"

    def lookups(self, request, model_admin):
        return (("missing", "Missing or empty (cannot authorize)"), ("set", "Set"))

    def queryset(self, request, queryset):
        missing = models.Q(profile__isnull=True) | models.Q(profile__scope_ceiling=[])
        if self.value() == "missing":
            return queryset.filter(missing)
        if self.value() == "set":
            return queryset.exclude(missing)
        return queryset


def _lacks_ceiling(application) -> bool:
    profile = getattr(application, "profile", None)
    return profile is None or not profile.scope_ceiling


CEILING_WARNING = (
    "This client has no scope ceiling (it was registered outside the admin, or its ceiling is "
    "empty), so every authorization request it makes fails with invalid_scope. Choose its scopes "
    "below and save."
)


class SuspendedFilter(admin.SimpleListFilter):
    title = "suspended"
    parameter_name = "suspended"

    def lookups(self, request, model_admin):
        return (("yes", "Yes"), ("no", "No"))

    def queryset(self, request, queryset):
        if self.value() == "yes":
            return queryset.filter(profile__suspended=True)
        if self.value() == "no":
            return queryset.exclude(profile__suspended=True)
        return queryset


@admin.register(Application)
class OAuthClientAdmin(ScaledAdminMixin, RevealOnceAdminMixin, admin.ModelAdmin):
    """Operators register OAuth clients here (docs/oauth.md). The secret is shown once, then only its
    hash exists; "Issue a new client secret" replaces it."""

    form = OAuthClientForm
    radio_fields = {"client_type": admin.HORIZONTAL}
    change_form_template = "admin/oauth2_provider/application/change_form.html"
    list_display = ("name", "client_id", "client_type", "scope_ceiling", "can_authorize", "suspended", "created")
    list_filter = ("client_type", ScopeCeilingFilter, SuspendedFilter, "created")
    search_by = (SearchField("name", "name", CONTAINS), SearchField("client_id", "client id", PREFIX))
    ordering = ("-pk",)  # newest first, as the list shows them; the filters' autocomplete pages with it
    list_select_related = ("profile",)
    actions = ("suspend_clients", "reactivate_clients")

    registration_fields = ("name", "redirect_uris", "client_type", "logo", "app_link", "scope_ceiling", "suspended")

    def get_fieldsets(self, request, obj=None):
        if obj is None:
            return ((None, {"fields": self.registration_fields}),)
        return (
            ("Credentials", {"fields": ("client_id", "client_secret_status")}),
            ("Registration", {"fields": self.registration_fields}),
            ("History", {"fields": ("created", "updated")}),
        )

    def get_readonly_fields(self, request, obj=None):
        return () if obj is None else ("client_id", "client_secret_status", "created", "updated")

    @admin.display(description="client secret")
    def client_secret_status(self, application):
        if application.client_type == Application.CLIENT_PUBLIC:
            return "None: a public client authenticates with PKCE, not a secret."
        return "Stored only as a hash; it was shown once, when issued. Use “Issue a new client secret” to replace it."

    @admin.display(description="scope ceiling")
    def scope_ceiling(self, application):
        if _lacks_ceiling(application):
            return format_html('<span class="ceiling-missing">{}</span>', "none: every request fails (invalid_scope)")
        return ", ".join(application.profile.scope_ceiling)

    @admin.display(description="can authorize", boolean=True)
    def can_authorize(self, application):
        return not _lacks_ceiling(application)

    def view_on_site(self, application):
        """DOT's Application links to a page of DOT's own client-management views, which this
        service does not mount; the client's "site" is its app link, when it has one."""
        profile = getattr(application, "profile", None)
        return (profile.app_link or None) if profile else None

    def change_view(self, request, object_id, form_url="", extra_context=None):
        application = self.get_object(request, unquote(object_id))
        if application is not None and request.method == "GET" and _lacks_ceiling(application):
            self.message_user(request, CEILING_WARNING, messages.WARNING)
        return super().change_view(request, object_id, form_url, extra_context)

    @admin.display(description="suspended", boolean=True, ordering="profile__suspended")
    def suspended(self, application):
        profile = getattr(application, "profile", None)
        return bool(profile and profile.suspended)

    def save_model(self, request, obj, form, change):
        registration = {
            "name": form.cleaned_data["name"],
            "redirect_uris": form.cleaned_data["redirect_uris"],
            "client_type": form.cleaned_data["client_type"],
            **form.profile_values(),
        }
        if change:
            oauth_client_update(application=obj, **registration)
            return
        application, clear_secret = oauth_client_register(**registration)
        adopt_saved(obj, application)
        obj.clear_secret = clear_secret

    def response_add(self, request, obj, post_url_continue=None):
        return self._reveal_credentials(request, obj, getattr(obj, "clear_secret", None))

    def _reveal_credentials(self, request, application, clear_secret):
        values = [("Client ID", application.client_id, False)]
        if application.client_type == Application.CLIENT_CONFIDENTIAL:
            values.append(("Client secret", clear_secret, True))
        return self.reveal_once(request, application, title=f"Credentials of {application.name}", values=values)

    def get_urls(self):
        reset = path(
            "<path:object_id>/reset-secret/",
            self.admin_site.admin_view(require_POST(self.reset_secret_view)),
            name=f"{self.opts.app_label}_{self.opts.model_name}_reset_secret",
        )
        return [reset, *super().get_urls()]

    def reset_secret_view(self, request, object_id):
        application = self.get_object(request, unquote(object_id))
        if application is None:
            raise Http404
        if not self.has_change_permission(request, application):
            raise PermissionDenied
        clear_secret = oauth_client_reset_secret(application=application)
        self.log_change(request, application, [{"changed": {"fields": ["client secret"]}}])
        return self._reveal_credentials(request, application, clear_secret)

    def _set_suspended(self, request, queryset, suspended: bool):
        for application in queryset:
            oauth_client_set_suspended(application=application, suspended=suspended)
        verb = "Suspended" if suspended else "Reactivated"
        self.message_user(request, f"{verb} {len(queryset)} client(s) at {timezone.now():%H:%M:%S} UTC.")

    @admin.action(description="Suspend selected clients (their tokens stop working)", permissions=("change",))
    def suspend_clients(self, request, queryset):
        self._set_suspended(request, queryset, True)

    @admin.action(description="Reactivate selected clients", permissions=("change",))
    def reactivate_clients(self, request, queryset):
        self._set_suspended(request, queryset, False)


@admin.register(OAuthCodeRedemption)
class OAuthCodeRedemptionAdmin(ScaledAdminMixin, admin.ModelAdmin):
    """Read-only: rows are written by the token endpoint to catch replayed authorization codes."""

    list_display = ("id", "application", "user", "scope", "token_family", "created_at")
    list_filter = (autocomplete_filter("application", "OAuth client"), autocomplete_filter("user"), "created_at")
    search_by = (
        SearchField("application__client_id", "client id", PREFIX),
        SearchField("user__email", "user e-mail", PREFIX_ANY_CASE),
        SearchField("user__username", "username", PREFIX_ANY_CASE),
    )
    list_select_related = ("application", "user")
    fields = ("application", "user", "scope", "token_family", "created_at")
    readonly_fields = fields

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
