"""Back office for e-mail: the outbox with each message's attempts (read-only), the reminders due,
and each event type's mail settings."""

from django import forms
from django.contrib import admin
from django.core.exceptions import ValidationError

from notifications.models import EmailAttempt, EmailMessage, EventTypeNotifications, Reminder
from notifications.services import clean_reminders, event_type_mail_settings_set


class EmailAttemptInline(admin.TabularInline):
    model = EmailAttempt
    extra = 0
    can_delete = False
    fields = ("started_at", "finished_at", "succeeded", "error")
    readonly_fields = fields

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(EmailMessage)
class EmailMessageAdmin(admin.ModelAdmin):
    list_display = ("id", "kind", "role", "recipient", "status", "attempts", "next_attempt_at", "created_at")
    list_filter = ("status", "kind", "role")
    search_fields = ("=recipient", "=message_id", "=booking__uid")
    raw_id_fields = ("booking",)
    inlines = [EmailAttemptInline]
    readonly_fields = [field.name for field in EmailMessage._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(Reminder)
class ReminderAdmin(admin.ModelAdmin):
    list_display = ("id", "booking", "minutes_before", "to", "send_at", "sent_at")
    list_filter = ("to",)
    raw_id_fields = ("booking",)

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


class EventTypeNotificationsForm(forms.ModelForm):
    class Meta:
        model = EventTypeNotifications
        fields = ("event_type", "disable_emails_to_attendees", "disable_emails_to_hosts", "reminders")

    def clean_reminders(self):
        try:
            return clean_reminders(self.cleaned_data["reminders"] or [])
        except ValidationError as error:
            raise ValidationError(error.messages) from error


@admin.register(EventTypeNotifications)
class EventTypeNotificationsAdmin(admin.ModelAdmin):
    form = EventTypeNotificationsForm
    list_display = ("event_type", "disable_emails_to_attendees", "disable_emails_to_hosts", "reminders")
    raw_id_fields = ("event_type",)

    def save_model(self, request, obj, form, change):
        event_type_mail_settings_set(
            event_type=obj.event_type,
            disable_emails_to_attendees=obj.disable_emails_to_attendees,
            disable_emails_to_hosts=obj.disable_emails_to_hosts,
            reminders=obj.reminders,
        )
