"""Back office for schedules, event types and bookings.

Schedules and their availability are written through `scheduling.services.schedules` (which keeps
the owner's default schedule right); bookings change state only through the booking services'
actions (which emit the webhook events). Event types are written through
`scheduling.services.event_types`, as an operator (`actor=None`): team roles do not apply to staff,
the event type's own rules (one owner, a slug unique per owner, its schedule) do. A team event
type's hosts (an inline) and its scheduling type are written through `scheduling.services.hosts`,
with the API's rules (a host is an accepted member of the team, hosts need a scheduling type).
"""

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.widgets import AutocompleteSelect
from django.core.exceptions import ValidationError
from django.db.models import Count, OuterRef, Subquery
from django.db.models.functions import Coalesce
from django.forms.models import BaseInlineFormSet

from core.admin import ServiceRefusalAdminMixin, adopt_saved
from core.admin_scale import CONTAINS, PREFIX, PREFIX_ANY_CASE, ScaledAdminMixin, SearchField, autocomplete_filter
from core.exceptions import ApplicationError
from payments.admin import format_money
from scheduling.models import Attendee, Availability, Booking, EventType, Host, Schedule
from scheduling.services.assignment import booking_team_members
from scheduling.services.bookings import booking_cancel, booking_confirm, booking_details_save, booking_reject
from scheduling.services.event_types import EDITABLE_FIELDS, event_type_create, event_type_delete, event_type_update
from scheduling.services.hosts import event_type_hosts_set, host_memberships
from scheduling.services.schedules import schedule_create, schedule_delete, schedule_update

WEEKDAY_CHOICES = [
    (0, "Sun"),
    (1, "Mon"),
    (2, "Tue"),
    (3, "Wed"),
    (4, "Thu"),
    (5, "Fri"),
    (6, "Sat"),
]


class AvailabilityForm(forms.ModelForm):
    """Shows `days_mask` as weekday checkboxes (0 = Sunday, as in the API)."""

    days = forms.TypedMultipleChoiceField(
        choices=WEEKDAY_CHOICES,
        coerce=int,
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="Weekly rule: tick its days. Date override: leave empty and set a date.",
    )

    class Meta:
        model = Availability
        fields = ["days", "start_time", "end_time", "date"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.instance.pk:
            self.initial["days"] = self.instance.days

    def clean(self):
        cleaned_data = super().clean()
        days, date = cleaned_data.get("days") or [], cleaned_data.get("date")
        start_time, end_time = cleaned_data.get("start_time"), cleaned_data.get("end_time")
        if date is None and not days:
            self.add_error("days", "A weekly rule needs at least one day (or set a date for an override).")
        if date is not None and days:
            self.add_error("days", "A date override has no weekdays; clear them or clear the date.")
        if start_time is not None and end_time is not None and not start_time < end_time:
            all_day_off = date is not None and start_time.hour == start_time.minute == 0 and end_time == start_time
            if not all_day_off:
                self.add_error("end_time", "The end must be after the start (00:00–00:00 on a date = unavailable).")
        self.instance.days_mask = Availability.mask_for(days)
        return cleaned_data

    def _get_validation_exclusions(self):
        # `days_mask` is set from `days`, so the model's checks on it must run too.
        exclusions = super()._get_validation_exclusions()
        exclusions.discard("days_mask")
        return exclusions


class AvailabilityInline(admin.TabularInline):
    model = Availability
    form = AvailabilityForm
    extra = 0


class EventTypeInline(admin.TabularInline):
    model = EventType
    fields = ("title", "slug", "length", "hidden")
    show_change_link = True
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(Schedule)
class ScheduleAdmin(ScaledAdminMixin, admin.ModelAdmin):
    list_display = ("name", "user", "time_zone", "is_default", "rule_count", "created_at")
    list_filter = (autocomplete_filter("user", "owner"),)
    search_by = (
        SearchField("name", "name", CONTAINS),
        SearchField("user__email", "owner e-mail", PREFIX_ANY_CASE),
        SearchField("user__username", "owner username", PREFIX_ANY_CASE),
    )
    list_select_related = ("user",)
    autocomplete_fields = ("user",)
    inlines = (AvailabilityInline, EventTypeInline)

    def get_queryset(self, request):
        # Counted per shown row (a correlated subquery), not for every schedule; hence not sortable.
        rules = Availability.objects.filter(schedule=OuterRef("pk")).order_by().values("schedule")
        rule_count = Coalesce(Subquery(rules.annotate(count=Count("pk")).values("count")), 0)
        return super().get_queryset(request).annotate(rule_count=rule_count)

    def get_readonly_fields(self, request, obj=None):
        return () if obj is None else ("user",)  # a schedule does not change hands

    def save_model(self, request, obj, form, change):
        if change:
            schedule_update(schedule=obj, name=obj.name, time_zone=obj.time_zone)
            return
        # The rules come from the inline, in save_related; [] keeps the service's Mon–Fri default out.
        schedule = schedule_create(actor=obj.user, name=obj.name, time_zone=obj.time_zone, availability=[])
        adopt_saved(obj, schedule)

    def save_related(self, request, form, formsets, change):
        for formset in formsets:
            formset.save(commit=False)  # writes nothing; records what changed, for the admin's history
            if formset.model is not Availability:
                continue
            rows = [
                {key: row.cleaned_data.get(key) for key in ("days", "start_time", "end_time", "date")}
                for row in formset.forms
                if row.cleaned_data and not formset._should_delete_form(row)
            ]
            schedule_update(schedule=form.instance, availability=rows)

    def delete_model(self, request, obj):
        schedule_delete(schedule=obj)

    def delete_queryset(self, request, queryset):
        for schedule in queryset:
            schedule_delete(schedule=schedule)

    @admin.display(description="default", boolean=True)
    def is_default(self, schedule):
        return schedule.user.default_schedule_id == schedule.pk

    @admin.display(description="rules")
    def rule_count(self, schedule):
        return schedule.rule_count


# Cal.com v2's names of a host's priorities.
PRIORITY_CHOICES = [(0, "lowest"), (1, "low"), (2, "medium"), (3, "high"), (4, "highest")]
HOST_SETTINGS = ("scheduling_type", "assign_all_team_members")


class LoadedUserAutocomplete(AutocompleteSelect):
    """The admin's autocomplete, rendering a row's user from the row (the inline reads the rows with
    their users) rather than reading it again: Django's reads the selected user once per row."""

    loaded: dict[str, object] = {}

    def optgroups(self, name, value, attr=None):
        selected = [str(each) for each in value if str(each) not in self.choices.field.empty_values]
        if not selected or any(each not in self.loaded for each in selected):
            return super().optgroups(name, value, attr)
        options = [] if self.is_required else [self.create_option(name, "", "", False, 0)]
        for each in selected:
            label = self.choices.field.label_from_instance(self.loaded[each])
            options.append(self.create_option(name, self.loaded[each].pk, label, set(selected), len(options)))
        return [(None, options, 0)]


class HostForm(forms.ModelForm):
    priority = forms.TypedChoiceField(choices=PRIORITY_CHOICES, coerce=int, initial=2)

    class Meta:
        model = Host
        fields = ["user", "is_fixed", "priority", "weight"]
        labels = {"is_fixed": "fixed (mandatory)"}
        help_texts = {"is_fixed": "A round-robin host who attends every booking (every host of a collective one does)."}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        widget = getattr(self.fields["user"].widget, "widget", None)  # inside the admin's wrapper
        if isinstance(widget, LoadedUserAutocomplete) and self.instance.user_id is not None:
            widget.loaded = {str(self.instance.user_id): self.instance.user}


class HostFormSet(BaseInlineFormSet):
    """The rows kept; each host must be an accepted member of the event type's team, once
    (`host_memberships`, the API's check), shown next to the row's user."""

    def rows(self) -> list[forms.Form]:
        return [
            form
            for form in self.forms
            if form.cleaned_data and not self._should_delete_form(form) and form.cleaned_data.get("user")
        ]

    def clean(self):
        super().clean()
        rows = self.rows()
        if not rows:
            return
        team_id = self.instance.team_id
        if team_id is None:
            raise ValidationError("Only a team event type has hosts.")
        _, problems = host_memberships(team_id=team_id, user_ids=[form.cleaned_data["user"].pk for form in rows])
        for index, message in problems.items():
            rows[index].add_error("user", message)


class HostInline(admin.TabularInline):
    model = Host
    form = HostForm
    formset = HostFormSet
    autocomplete_fields = ("user",)
    extra = 0
    verbose_name = "host"

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("user")

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "user":
            kwargs["widget"] = LoadedUserAutocomplete(db_field, self.admin_site, using=kwargs.get("using"))
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


@admin.register(EventType)
class EventTypeAdmin(ScaledAdminMixin, ServiceRefusalAdminMixin, admin.ModelAdmin):
    list_display = (
        "title",
        "slug",
        "owner",
        "team",
        "scheduling_type",
        "length",
        "price_display",
        "schedule",
        "hidden",
    )
    list_filter = (
        "scheduling_type",
        "hidden",
        "requires_confirmation",
        "currency",
        autocomplete_filter("owner"),
        autocomplete_filter("team"),
    )
    search_by = (
        SearchField("title", "title", CONTAINS),
        SearchField("slug", "slug", PREFIX),
        SearchField("owner__email", "owner e-mail", PREFIX_ANY_CASE),
        SearchField("team__slug", "team slug", PREFIX),
    )
    list_select_related = ("owner", "team", "schedule")
    autocomplete_fields = ("owner", "team", "schedule")
    inlines = (HostInline,)

    def get_readonly_fields(self, request, obj=None):
        return () if obj is None else ("owner", "team")  # an event type does not change hands

    def save_model(self, request, obj, form, change):
        values = {name: form.cleaned_data[name] for name in EDITABLE_FIELDS if name in form.cleaned_data}
        schedule = form.cleaned_data.get("schedule")
        if change:
            event_type_update(event_type=obj, actor=None, schedule_id=getattr(schedule, "pk", None), **values)
            return
        event_type = event_type_create(
            user=obj.owner, team_id=obj.team_id, schedule_id=getattr(schedule, "pk", None), **values
        )
        adopt_saved(obj, event_type)

    def save_related(self, request, form, formsets, change):
        """The hosts and the scheduling type, together, when either changed: the inline's rows
        replace the hosts, as `hosts` does in the API."""
        hosts = next(formset for formset in formsets if formset.model is Host)
        hosts.save(commit=False)  # writes nothing; records what changed, for the admin's history
        if not hosts.has_changed() and not any(name in form.changed_data for name in HOST_SETTINGS):
            return
        rows = [
            {name: row.cleaned_data[name] for name in ("is_fixed", "priority", "weight")}
            | {"user_id": row.cleaned_data["user"].pk}
            for row in hosts.rows()
        ]
        settings = {name: form.cleaned_data.get(name) for name in HOST_SETTINGS}
        event_type_hosts_set(event_type=form.instance, hosts=rows, **settings)

    def delete_model(self, request, obj):
        event_type_delete(event_type=obj, actor=None)

    def delete_queryset(self, request, queryset):
        for event_type in queryset:
            event_type_delete(event_type=event_type, actor=None)

    @admin.display(description="price", ordering="price")
    def price_display(self, event_type):
        return format_money(event_type.price, event_type.currency) if event_type.price else "free"


class AttendeeInline(admin.TabularInline):
    model = Attendee
    extra = 0


@admin.register(Booking)
class BookingAdmin(ScaledAdminMixin, admin.ModelAdmin):
    """Bookings are made through the API (which checks the slot is offered and free). Here staff
    inspect them, fix descriptive fields and attendees, and move them through their lifecycle with
    the actions, which emit the same webhook events as the API."""

    list_display = ("uid", "title", "organizer", "event_type", "start_time", "end_time", "status")
    list_filter = ("status", autocomplete_filter("organizer"), "start_time")
    search_by = (
        SearchField("uid", "booking uid", PREFIX),
        SearchField("organizer__email", "organizer e-mail", PREFIX_ANY_CASE),
        SearchField("attendees__email", "attendee e-mail", PREFIX_ANY_CASE),
        SearchField("title", "title", CONTAINS),
    )
    list_select_related = ("organizer", "event_type")
    readonly_fields = (
        "uid",
        "organizer",
        "attending_hosts",
        "event_type",
        "start_time",
        "end_time",
        "status",
        "cancellation_reason",
        "rescheduled_from",
        "created_at",
        "updated_at",
    )
    fields = (
        "uid",
        "organizer",
        "attending_hosts",
        "event_type",
        "start_time",
        "end_time",
        "status",
        "title",
        "description",
        "location",
        "metadata",
        "cancellation_reason",
        "rescheduled_from",
        "created_at",
        "updated_at",
    )
    date_hierarchy = "start_time"
    inlines = (AttendeeInline,)
    actions = ("confirm_bookings", "reject_bookings", "cancel_bookings")

    def has_add_permission(self, request):
        return False

    @admin.display(description="attending hosts")
    def attending_hosts(self, booking):
        """The hosts of a team booking beside its organizer (Cal.com's `team.members`)."""
        members = booking_team_members(booking)
        return ", ".join(f"{user.username} (id {user.pk})" for user in members) or "-"

    def save_model(self, request, obj, form, change):
        booking_details_save(booking=obj, changed_fields=form.changed_data)

    def _transition(self, request, queryset, service, done: str):
        changed = 0
        for booking in queryset:
            try:
                service(booking=booking)
                changed += 1
            except (ApplicationError, ValidationError) as error:
                detail = error.detail if isinstance(error, ApplicationError) else " ".join(error.messages)
                self.message_user(request, str(detail), messages.ERROR)
        if changed:
            self.message_user(request, f"{done} {changed} booking(s).", messages.SUCCESS)

    @admin.action(description="Confirm selected pending bookings", permissions=("change",))
    def confirm_bookings(self, request, queryset):
        self._transition(request, queryset, booking_confirm, "Confirmed")

    @admin.action(description="Reject selected pending bookings", permissions=("change",))
    def reject_bookings(self, request, queryset):
        self._transition(request, queryset, booking_reject, "Rejected")

    @admin.action(description="Cancel selected bookings", permissions=("change",))
    def cancel_bookings(self, request, queryset):
        self._transition(request, queryset, booking_cancel, "Cancelled")
