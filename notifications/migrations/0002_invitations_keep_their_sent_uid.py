# Invitations now carry the meeting's UID (`core.ical.ical_uid`, `<uid>@Cal.com`), the one its
# calendar event, payloads and answers carry, instead of `<uid>@<mail domain>`. A meeting whose
# invitation already went out under the old UID keeps that UID, or its attendees' calendars would
# hold the next update as a second event: its calendar identity is stored, as first sent, for the
# bookings that have not ended. (Series and rescheduled bookings already have theirs stored.)
from django.db import migrations

KEEP_SENT_UIDS = """
INSERT INTO notifications_invitation (booking_id, ical_uid, sequence)
SELECT DISTINCT ON (b.id) b.id, m.context->'ical'->>'uid',
       GREATEST(b.ical_sequence, COALESCE((m.context->'ical'->>'sequence')::integer, 0))
FROM scheduling_booking b
JOIN notifications_emailmessage m ON m.booking_id = b.id
WHERE b.end_time > now()
  AND m.context->'ical'->>'uid' IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM notifications_invitation i WHERE i.booking_id = b.id)
ORDER BY b.id, m.id
"""


class Migration(migrations.Migration):
    dependencies = [
        ("notifications", "0001_initial"),
        ("scheduling", "0010_booking_ical_uid"),
    ]

    operations = [migrations.RunSQL(KEEP_SENT_UIDS, migrations.RunSQL.noop)]
