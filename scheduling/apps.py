from django.apps import AppConfig


class SchedulingConfig(AppConfig):
    name = "scheduling"

    def ready(self):
        # Webhooks learn about bookings from here, not by importing this app (webhooks.sources).
        from scheduling.webhook_source import SOURCE
        from webhooks.sources import provide

        provide(SOURCE)
        import calendars.sources
        from scheduling.calendar_source import booking_event, booking_organizer_id, feed_entries

        calendars.sources.provide(
            calendars.sources.BookingSource(
                booking_event=booking_event, booking_organizer_id=booking_organizer_id, feed_entries=feed_entries
            )
        )
