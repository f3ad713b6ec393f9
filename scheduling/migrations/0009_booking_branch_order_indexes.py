from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("scheduling", "0008_merge_0007_booking_list_order_indexes_0007_team_hosts"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="booking",
            index=models.Index(fields=["organizer", "end_time", "id"], name="booking_organizer_end"),
        ),
        migrations.AddIndex(
            model_name="booking",
            index=models.Index(fields=["event_type", "end_time", "id"], name="booking_event_type_end"),
        ),
        migrations.AddIndex(
            model_name="booking",
            index=models.Index(fields=["organizer", "created_at", "id"], name="booking_organizer_created"),
        ),
        migrations.AddIndex(
            model_name="booking",
            index=models.Index(fields=["event_type", "created_at", "id"], name="booking_event_type_created"),
        ),
        migrations.AddIndex(
            model_name="booking",
            index=models.Index(fields=["organizer", "updated_at", "id"], name="booking_organizer_updated"),
        ),
        migrations.AddIndex(
            model_name="booking",
            index=models.Index(fields=["event_type", "updated_at", "id"], name="booking_event_type_updated"),
        ),
    ]
