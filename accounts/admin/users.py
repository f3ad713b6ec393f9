"""The back office for users: the operator adds them through `accounts.services`."""

from django.contrib import admin
from django.contrib.auth.admin import UserAdmin as DjangoUserAdmin
from django.db import models

from accounts.admin.forms import UserAddForm
from accounts.models import User
from accounts.services import (
    user_create,
    user_update,
)
from core.admin import ServiceRefusalAdminMixin, adopt_saved
from core.admin_scale import CONTAINS, PREFIX_ANY_CASE, ScaledAdminMixin, SearchField


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
