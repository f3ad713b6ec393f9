from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("calendars", "0002_calendar_feed"),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name="calendarconnection",
            name="calendar_kind_valid",
        ),
        migrations.AlterField(
            model_name="calendarconnection",
            name="kind",
            field=models.CharField(
                choices=[
                    ("caldav", "CalDAV"),
                    ("apple", "Apple iCloud (CalDAV)"),
                    ("ics", "ICS feed"),
                    ("google", "Google Calendar"),
                    ("office365", "Microsoft 365 (Outlook)"),
                ],
                max_length=10,
            ),
        ),
        migrations.AddConstraint(
            model_name="calendarconnection",
            constraint=models.CheckConstraint(
                condition=models.Q(("kind__in", ["caldav", "apple", "ics", "google", "office365"])),
                name="calendar_kind_valid",
            ),
        ),
    ]
