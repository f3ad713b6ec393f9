from django.db import migrations, models

# Bookings made by rescheduling another take the first booking's iCalUID; the ones already made
# get it here (each one walks up its chain of `rescheduled_from` to the first). Others keep '' and are read
# as `<uid>@Cal.com`.
BACKFILL = """
WITH RECURSIVE up (id, ancestor_id) AS (
    SELECT id, rescheduled_from_id FROM scheduling_booking WHERE rescheduled_from_id IS NOT NULL
    UNION ALL
    SELECT up.id, parent.rescheduled_from_id
    FROM up JOIN scheduling_booking parent ON parent.id = up.ancestor_id
    WHERE parent.rescheduled_from_id IS NOT NULL
)
UPDATE scheduling_booking SET ical_uid = root.uid || '@Cal.com'
FROM up JOIN scheduling_booking root ON root.id = up.ancestor_id AND root.rescheduled_from_id IS NULL
WHERE scheduling_booking.id = up.id
"""


class Migration(migrations.Migration):
    dependencies = [("scheduling", "0009_booking_branch_order_indexes")]

    operations = [
        migrations.AddField(
            model_name="booking",
            name="ical_uid",
            field=models.CharField(blank=True, default="", max_length=255),
        ),
        migrations.RunSQL(BACKFILL, migrations.RunSQL.noop),
    ]
