"""API keys in the back office: created through `accounts.services`, the raw key shown once."""

from django.contrib import admin, messages

from accounts.models import ApiKey
from accounts.services import (
    api_key_create,
    api_key_revoke,
)
from core.admin import RevealOnceAdminMixin, adopt_saved
from core.admin_scale import CONTAINS, PREFIX, PREFIX_ANY_CASE, ScaledAdminMixin, SearchField, autocomplete_filter


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
