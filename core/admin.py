from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.http import Http404, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse

from core.exceptions import ApplicationError
from core.models import App


def refusal_text(error: ValidationError | ApplicationError) -> str:
    """What an operator reads when a service refuses a write."""
    if isinstance(error, ApplicationError):
        return str(error.detail)
    return " ".join(error.messages)


class ServiceRefusalAdminMixin:
    """The admin's writes go through the services, which refuse broken rules with `ValidationError`
    or an `ApplicationError` (`Conflict`, `Forbidden`). A refusal raised while saving (in
    `save_model`, `save_related`, `delete_model` or an action) rolls the whole admin request back
    (Django's admin views run in one transaction) and is shown as an error message on the page the
    operator came from, instead of a server error. Rules a form can check before saving stay in the
    form, where they show next to the field."""

    def _refused(self, request, error) -> HttpResponseRedirect:
        self.message_user(request, refusal_text(error), messages.ERROR)
        return HttpResponseRedirect(request.get_full_path())

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        try:
            return super().changeform_view(request, object_id, form_url, extra_context)
        except (ValidationError, ApplicationError) as error:
            return self._refused(request, error)

    def delete_view(self, request, object_id, extra_context=None):
        try:
            return super().delete_view(request, object_id, extra_context)
        except (ValidationError, ApplicationError) as error:
            return self._refused(request, error)

    def changelist_view(self, request, extra_context=None):
        try:
            with transaction.atomic():
                return super().changelist_view(request, extra_context)
        except (ValidationError, ApplicationError) as error:
            return self._refused(request, error)


class RevealOnceAdminMixin:
    """Shows freshly issued credentials (client secret, API key) on their own page, exactly once.

    The clear value is parked in the operator's session only for the redirect after the POST
    (so that reloading the page cannot submit the form twice) and is popped when the page is shown:
    a reload, the back button or another operator finds nothing.
    """

    reveal_template = "admin/reveal_once.html"

    def _reveal_session_key(self, obj) -> str:
        return f"reveal_once:{obj._meta.label_lower}:{obj.pk}"

    def _reveal_url_name(self) -> str:
        return f"{self.opts.app_label}_{self.opts.model_name}_reveal"

    def reveal_once(self, request, obj, *, title: str, values: list[tuple[str, str, bool]]) -> HttpResponseRedirect:
        """`values` are (label, value, is_secret) rows; the response is the redirect to show them."""
        request.session[self._reveal_session_key(obj)] = {"title": title, "values": values}
        return HttpResponseRedirect(reverse(f"admin:{self._reveal_url_name()}", args=[obj.pk]))

    def get_urls(self):
        reveal = path(
            "<path:object_id>/reveal/",
            self.admin_site.admin_view(self.reveal_view),
            name=self._reveal_url_name(),
        )
        return [reveal, *super().get_urls()]

    def reveal_view(self, request, object_id):
        obj = self.get_object(request, unquote(object_id))
        if obj is None:
            raise Http404
        if not self.has_view_permission(request, obj):
            raise PermissionDenied
        revealed = request.session.pop(self._reveal_session_key(obj), None)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "original": obj,
            "title": revealed["title"] if revealed else f"{obj}: credentials",
            "values": revealed["values"] if revealed else None,
            "has_secret": bool(revealed) and any(is_secret for _, _, is_secret in revealed["values"]),
            "change_url": reverse(f"admin:{self.opts.app_label}_{self.opts.model_name}_change", args=[obj.pk]),
        }
        response = TemplateResponse(request, self.reveal_template, context)
        response["Cache-Control"] = "no-store"
        return response


@admin.register(App)
class AppAdmin(admin.ModelAdmin):
    list_display = ("slug", "name", "categories")
    search_fields = ("slug", "name")
    ordering = ("slug",)


def adopt_saved(obj, saved) -> None:
    """Make the admin's unsaved form instance the row a service just created, so that the admin's
    log entry and redirect point at it."""
    for field in saved._meta.concrete_fields:
        setattr(obj, field.attname, getattr(saved, field.attname))
    obj._state.adding = False
    obj._state.db = saved._state.db
