"""Connections and their health for operators: no secret is shown (the encrypted credentials are
not a field of any form), and an operator can disconnect one (the same service as the API)."""

from django.contrib import admin, messages

from calendars.models import CalendarConnection, ExternalCalendar
from calendars.selectors import is_healthy
from calendars.services import connection_disconnect


class ExternalCalendarInline(admin.TabularInline):
    model = ExternalCalendar
    fields = ("name", "time_zone", "is_selected", "read_only")
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = False

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(CalendarConnection)
class CalendarConnectionAdmin(admin.ModelAdmin):
    list_display = ("id", "user", "kind", "label", "healthy", "last_success_at", "last_error")
    list_filter = ("kind", "invalid")
    search_fields = ("user__email", "label")
    list_select_related = ("user",)
    fields = ("user", "kind", "label", "invalid", "last_attempt_at", "last_success_at", "last_error", "created_at")
    readonly_fields = fields
    inlines = [ExternalCalendarInline]
    actions = ["disconnect"]

    @admin.display(boolean=True)
    def healthy(self, connection):
        return is_healthy(connection)

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def delete_model(self, request, obj):
        connection_disconnect(connection=obj)

    @admin.action(description="Disconnect the selected connections")
    def disconnect(self, request, queryset):
        count = 0
        for connection in queryset:
            connection_disconnect(connection=connection)
            count += 1
        self.message_user(request, f"{count} connection(s) disconnected.", messages.SUCCESS)
