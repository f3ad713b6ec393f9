from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("scheduling", "0010_booking_ical_uid")]

    operations = [
        migrations.AddField(
            model_name="eventtype",
            name="booking_limits",
            field=models.JSONField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="eventtype",
            name="duration_limits",
            field=models.JSONField(blank=True, null=True),
        ),
    ]
