"""Teams and memberships in the back office: staff edit them without the API's role rules
(`actor=None`), but never so that a team loses its last accepted OWNER."""

from django import forms
from django.contrib import admin
from django.contrib.admin.widgets import AutocompleteSelect
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Count, OuterRef, Subquery
from django.db.models.functions import Coalesce
from django.forms.models import BaseInlineFormSet

from accounts.models import Membership, MembershipRole, Team, User
from accounts.services import (
    membership_create,
    membership_delete,
    membership_owner_loss,
    membership_update,
    team_create,
    team_delete,
    team_update,
)
from core.admin import ServiceRefusalAdminMixin, adopt_saved
from core.admin_scale import CONTAINS, PREFIX, PREFIX_ANY_CASE, ScaledAdminMixin, SearchField, autocomplete_filter


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
