"""Back office for people, teams, API keys and OAuth clients.

Every write goes through the services the API uses (users, teams, memberships, API keys:
`accounts.services`; OAuth clients: `accounts.oauth.services`, which `createoauthclient` also uses),
so the same rules hold here. Staff edit teams and memberships without the API's role rules
(`actor=None`), but never so that a team loses its last accepted OWNER: the forms say so next to the
field (`accounts.services.membership_owner_loss`), and the services refuse it in any case.
"""

from django import forms
from django.apps import apps
from django.conf import settings
from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.contrib.admin.widgets import AutocompleteSelect
from django.contrib.auth.admin import UserAdmin as DjangoUserAdmin
from django.contrib.auth.models import Group
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import models
from django.db.models import Count, OuterRef, Subquery
from django.db.models.functions import Coalesce
from django.forms.models import BaseInlineFormSet
from django.http import Http404
from django.urls import path
from django.utils import timezone
from django.utils.functional import lazy
from django.utils.html import format_html
from django.views.decorators.http import require_POST
from oauth2_provider.admin import GrantAdmin as DOTGrantAdmin
from oauth2_provider.admin import IDTokenAdmin as DOTIDTokenAdmin
from oauth2_provider.models import Application, Grant, IDToken

from accounts.admin_forms import OAuthClientForm, UserAddForm
from accounts.models import ApiKey, Membership, MembershipRole, OAuthCodeRedemption, Team, User
from accounts.oauth.services import (
    oauth_client_register,
    oauth_client_reset_secret,
    oauth_client_set_suspended,
    oauth_client_update,
)
from accounts.services import (
    api_key_create,
    api_key_revoke,
    membership_create,
    membership_delete,
    membership_owner_loss,
    membership_update,
    team_create,
    team_delete,
    team_update,
    user_create,
    user_update,
)
from accounts.throttle import ThrottledAdminAuthenticationForm
from core.admin import RevealOnceAdminMixin, ServiceRefusalAdminMixin
from core.admin_scale import CONTAINS, PREFIX, PREFIX_ANY_CASE, ScaledAdminMixin, SearchField, autocomplete_filter

# The admin's sign-in goes through the same throttle as /auth/login (accounts.throttle).
admin.site.login_form = ThrottledAdminAuthenticationForm

# The back office carries the service's name, and "View site" leads to the API reference (the
# service has no public website of its own).
admin.site.site_header = admin.site.site_title = lazy(lambda: f"{settings.SERVICE_NAME} back office", str)()
admin.site.index_title = "Operations"
admin.site.site_url = "/v1/docs"
# The changelists (payments, deliveries) need the width more than a second list of models: the index
# and the breadcrumbs already lead everywhere.
admin.site.enable_nav_sidebar = False

# Staff rights come from `is_staff` / `is_superuser` and API rights from roles and scopes; groups
# are never consulted, so the admin does not offer them (docs/operations.md).
admin.site.unregister(Group)
# The section of django-oauth-toolkit's models is named for what it is to the operator.
apps.get_app_config("oauth2_provider").verbose_name = "OAuth 2.0 provider"


def adopt_saved(obj, saved) -> None:
    """Make the admin's unsaved form instance the row a service just created, so that the admin's
    log entry and redirect point at it."""
    for field in saved._meta.concrete_fields:
        setattr(obj, field.attname, getattr(saved, field.attname))
    obj._state.adding = False
    obj._state.db = saved._state.db


# --- Users -----------------------------------------------------------------------------------


@admin.register(User)
class UserAdmin(ScaledAdminMixin, ServiceRefusalAdminMixin, DjangoUserAdmin):
    add_form = UserAddForm
    add_fieldsets = ((None, {"classes": ("wide",), "fields": ("username", "email", "name", "password1", "password2")}),)
    fieldsets = (
        (None, {"fields": ("username", "password")}),
        ("Profile", {"fields": ("name", "email", "email_verified", "bio", "avatar", "role", "verified", "invited_to")}),
        (
            "Preferences",
            {
                "fields": (
                    "time_zone",
                    "week_start",
                    "end_time",
                    "buffer_time",
                    "default_schedule",
                    "locale",
                    "time_format",
                    "app_theme",
                    "theme",
                    "hide_branding",
                    "brand_color",
                    "dark_brand_color",
                    "allow_dynamic_booking",
                )
            },
        ),
        (
            "Permissions",
            {"fields": ("is_active", "is_staff", "is_superuser", "user_permissions")},
        ),
        ("Dates", {"fields": ("last_login", "date_joined")}),
    )
    list_display = ("username", "email", "name", "role", "time_zone", "is_staff", "is_active", "date_joined")
    list_filter = ("role", "is_staff", "is_superuser", "is_active", "verified")
    search_by = (
        SearchField("username", "username", PREFIX_ANY_CASE),
        SearchField("email", "e-mail", PREFIX_ANY_CASE),
        SearchField("name", "name", CONTAINS),
    )
    raw_id_fields = ("default_schedule",)
    ordering = ("id",)
    filter_horizontal = ("user_permissions",)
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}

    def save_model(self, request, obj, form, change):
        if change:
            user_update(user=obj, **changed_values(form))
            return
        password = form.cleaned_data.get("password1") if obj.has_usable_password() else None
        user = user_create(username=obj.username, email=obj.email, name=obj.name, password=password or None)
        adopt_saved(obj, user)


def changed_values(form) -> dict:
    """The fields the operator changed, without many-to-many ones (`save_related` writes those)."""
    many_to_many = {field.name for field in form._meta.model._meta.many_to_many}
    return {name: form.cleaned_data[name] for name in form.changed_data if name not in many_to_many}


# --- Teams and memberships -------------------------------------------------------------------


class MembershipInlineFormSet(BaseInlineFormSet):
    def clean(self):
        super().clean()
        if self.instance.pk is None:
            return
        remaining = {
            form.instance.pk or id(form)
            for form in self.forms
            if form.cleaned_data
            and not form.cleaned_data.get("DELETE")
            and form.cleaned_data.get("accepted")
            and form.cleaned_data.get("role") == MembershipRole.OWNER
        }
        problem = membership_owner_loss(team=self.instance, remaining_owner_ids=remaining)
        if problem:
            raise ValidationError(problem)


class MembershipInline(admin.TabularInline):
    model = Membership
    formset = MembershipInlineFormSet
    fields = ("user", "role", "accepted", "disable_impersonation", "created_at")
    readonly_fields = ("created_at",)
    autocomplete_fields = ("user",)
    extra = 0

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("user")


class TeamAddForm(forms.ModelForm):
    """A team starts with an accepted OWNER, as through the API: the operator names who."""

    owner = forms.ModelChoiceField(
        queryset=User.objects.all(),
        widget=AutocompleteSelect(Membership._meta.get_field("user"), admin.site),
        help_text="Becomes the team's accepted OWNER.",
    )
    logo = forms.URLField(required=False, assume_scheme="https", max_length=2048)

    class Meta:
        model = Team
        fields = ("name", "slug", "bio", "logo", "hide_branding", "owner")


@admin.register(Team)
class TeamAdmin(ScaledAdminMixin, ServiceRefusalAdminMixin, admin.ModelAdmin):
    list_display = ("name", "slug", "member_count", "hide_branding", "created_at")
    search_by = (SearchField("name", "name", CONTAINS), SearchField("slug", "slug", PREFIX))
    prepopulated_fields = {"slug": ("name",)}
    inlines = (MembershipInline,)
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}

    def get_form(self, request, obj=None, change=False, **kwargs):
        if obj is None:
            kwargs["form"] = TeamAddForm
        return super().get_form(request, obj, change=change, **kwargs)

    def get_inlines(self, request, obj):
        # A new team's first member is its owner, from the add form; the others follow on its page.
        return self.inlines if obj is not None else ()

    def save_model(self, request, obj, form, change):
        values = {name: form.cleaned_data[name] for name in ("name", "slug", "bio", "logo", "hide_branding")}
        if change:
            team_update(team=obj, actor=None, **values)
            return
        adopt_saved(obj, team_create(owner=form.cleaned_data["owner"], **values))

    def save_formset(self, request, form, formset, change):
        """Memberships go through the membership services: additions and promotions first, then
        demotions, then removals, so that a valid end state never passes through one with no
        accepted OWNER."""
        if formset.model is not Membership:
            return super().save_formset(request, form, formset, change)
        formset.save(commit=False)  # writes nothing; records what changed, for the admin's history
        removed = [row.instance for row in formset.deleted_forms if row.instance.pk]
        rows = [row for row in formset.forms if row.has_changed() and row not in formset.deleted_forms]

        def becomes_owner(row) -> bool:
            return row.cleaned_data.get("role") == MembershipRole.OWNER and bool(row.cleaned_data.get("accepted"))

        for row in sorted(rows, key=lambda row: not becomes_owner(row)):
            values = {key: row.cleaned_data.get(key) for key in ("role", "accepted", "disable_impersonation")}
            if row.instance.pk is None:
                membership = membership_create(
                    actor=None, user_id=row.cleaned_data["user"].pk, team_id=form.instance.pk, **values
                )
                adopt_saved(row.instance, membership)
            else:
                membership_update(membership=row.instance, actor=None, **values)
        for membership in removed:
            membership_delete(membership=membership, actor=None)

    def delete_model(self, request, obj):
        team_delete(team=obj, actor=None)

    def delete_queryset(self, request, queryset):
        for team in queryset:
            team_delete(team=team, actor=None)

    def get_queryset(self, request):
        # A correlated subquery, computed only for the rows a page shows (a JOIN + GROUP BY would
        # count the members of every team). Not sortable, for the same reason.
        members = Membership.objects.filter(team=OuterRef("pk")).order_by().values("team").annotate(count=Count("pk"))
        return super().get_queryset(request).annotate(member_count=Coalesce(Subquery(members.values("count")), 0))

    @admin.display(description="members")
    def member_count(self, team):
        return team.member_count


@admin.register(Membership)
class MembershipAdmin(ScaledAdminMixin, ServiceRefusalAdminMixin, admin.ModelAdmin):
    list_display = ("user", "user_email", "team", "role", "accepted", "disable_impersonation", "created_at")
    # Teams and users are chosen by typing (the admin's autocomplete), never listed in the sidebar.
    list_filter = ("role", "accepted", autocomplete_filter("team"), autocomplete_filter("user"))
    search_by = (
        SearchField("user__email", "member e-mail", PREFIX_ANY_CASE),
        SearchField("user__username", "member username", PREFIX_ANY_CASE),
        SearchField("team__name", "team name", CONTAINS),
        SearchField("team__slug", "team slug", PREFIX),
    )
    list_select_related = ("user", "team")
    autocomplete_fields = ("user", "team")

    @admin.display(description="e-mail", ordering="user__email")
    def user_email(self, membership):
        return membership.user.email

    def get_readonly_fields(self, request, obj=None):
        return () if obj is None else ("user", "team")  # a membership does not change hands

    def get_form(self, request, obj=None, change=False, **kwargs):
        form_class = super().get_form(request, obj, change=change, **kwargs)

        class MembershipForm(form_class):
            def clean(self):
                cleaned = super().clean()
                membership = self.instance
                stays_owner = cleaned.get("accepted") and cleaned.get("role") == MembershipRole.OWNER
                others = _accepted_owner_ids(membership.team, exclude=[membership.pk])
                remaining = others | ({membership.pk} if stays_owner else set())
                problem = membership_owner_loss(team=membership.team, remaining_owner_ids=remaining)
                if problem:
                    raise ValidationError(problem)
                return cleaned

        return form_class if obj is None else MembershipForm

    def save_model(self, request, obj, form, change):
        values = {key: form.cleaned_data.get(key) for key in ("role", "accepted", "disable_impersonation")}
        if change:
            membership_update(membership=obj, actor=None, **values)
            return
        membership = membership_create(
            actor=None, user_id=form.cleaned_data["user"].pk, team_id=form.cleaned_data["team"].pk, **values
        )
        adopt_saved(obj, membership)

    def delete_model(self, request, obj):
        membership_delete(membership=obj, actor=None)

    def delete_queryset(self, request, queryset):
        for membership in queryset:
            membership_delete(membership=membership, actor=None)

    def get_deleted_objects(self, objs, request):
        """Deleting the last accepted owner of a team is refused on the confirmation page."""
        deleted, counts, perms_needed, protected = super().get_deleted_objects(objs, request)
        by_team: dict[int, list[Membership]] = {}
        for membership in objs:
            by_team.setdefault(membership.team_id, []).append(membership)
        for memberships in by_team.values():
            team = memberships[0].team
            remaining = _accepted_owner_ids(team, exclude=[membership.pk for membership in memberships])
            problem = membership_owner_loss(team=team, remaining_owner_ids=remaining)
            if problem:
                protected = [*protected, problem]
        return deleted, counts, perms_needed, protected


def _accepted_owner_ids(team, *, exclude) -> set[int]:
    owners = Membership.objects.filter(team=team, accepted=True, role=MembershipRole.OWNER).exclude(pk__in=exclude)
    return set(owners.values_list("pk", flat=True))


# --- API keys --------------------------------------------------------------------------------


class RevokedFilter(admin.SimpleListFilter):
    title = "revoked"
    parameter_name = "revoked"

    def lookups(self, request, model_admin):
        return (("yes", "Yes"), ("no", "No"))

    def queryset(self, request, queryset):
        if self.value() in ("yes", "no"):
            return queryset.filter(revoked_at__isnull=self.value() == "no")
        return queryset


@admin.register(ApiKey)
class ApiKeyAdmin(ScaledAdminMixin, RevealOnceAdminMixin, admin.ModelAdmin):
    """API keys are created through `api_key_create` and shown once; afterwards they can only be
    looked at or revoked (no field of an issued key may change)."""

    list_display = ("visible_prefix", "note", "user", "expires_at", "last_used_at", "revoked_at", "created_at")
    list_filter = (RevokedFilter, autocomplete_filter("user"), "expires_at", "created_at")
    search_by = (
        SearchField("prefix", "prefix", PREFIX),
        SearchField("note", "note", CONTAINS),
        SearchField("user__email", "owner e-mail", PREFIX_ANY_CASE),
        SearchField("user__username", "owner username", PREFIX_ANY_CASE),
    )
    list_select_related = ("user",)
    autocomplete_fields = ("user",)
    actions = ("revoke_keys",)

    def get_fields(self, request, obj=None):
        if obj is None:
            return ("user", "note", "expires_at")
        return ("visible_prefix", "user", "note", "expires_at", "last_used_at", "revoked_at", "created_at")

    def get_readonly_fields(self, request, obj=None):
        return () if obj is None else self.get_fields(request, obj)

    def has_change_permission(self, request, obj=None):
        return False

    def has_revoke_permission(self, request):
        return request.user.has_perm("accounts.change_apikey")

    @admin.display(description="prefix", ordering="prefix")
    def visible_prefix(self, api_key):
        return f"{api_key.prefix}…"

    def save_model(self, request, obj, form, change):
        api_key, raw_key = api_key_create(user=obj.user, note=obj.note, expires_at=obj.expires_at)
        adopt_saved(obj, api_key)
        obj.raw_key = raw_key

    def response_add(self, request, obj, post_url_continue=None):
        return self.reveal_once(
            request,
            obj,
            title=f"API key for {obj.user}",
            values=[("API key", obj.raw_key, True), ("Prefix", obj.prefix, False)],
        )

    @admin.action(description="Revoke selected API keys", permissions=("revoke",))
    def revoke_keys(self, request, queryset):
        revoked = 0
        for api_key in queryset.filter(revoked_at__isnull=True):
            api_key_revoke(api_key=api_key)
            revoked += 1
        self.message_user(request, f"Revoked {revoked} API key(s); they stop working at once.", messages.SUCCESS)


# --- OAuth clients ---------------------------------------------------------------------------

admin.site.unregister(Application)
admin.site.unregister(Grant)
admin.site.unregister(IDToken)


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
class GrantAdmin(ExplainedReadOnlyAdmin, DOTGrantAdmin):
    explanation = (
        "Authorization codes waiting to be exchanged at the token endpoint. The service issues them "
        "on the consent page; each lives at most 10 minutes and is deleted when exchanged, so there "
        "is nothing to add or edit here. Deleting one makes its exchange fail with invalid_grant."
    )
    list_select_related = ("application", "user")


@admin.register(IDToken)
class IDTokenAdmin(ExplainedReadOnlyAdmin, DOTIDTokenAdmin):
    explanation = (
        "OpenID Connect ID tokens. This service does not enable OpenID Connect and never issues "
        "them; the list stays empty and is shown read-only only because the OAuth library defines it."
    )


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
