"""No double booking, enforced by PostgreSQL itself.

An exclusion constraint refuses two ACCEPTED/PENDING bookings of one organizer whose
[start, end) ranges overlap, whatever the application does and however many processes race.
It needs the btree_gist extension (for `organizer_id WITH =` inside a GiST index).

The constraint is not part of the model state on purpose: the same migrations run on SQLite for
`make run`, where neither exclusion constraints nor extensions exist, so both operations act only
on PostgreSQL. The services still check for overlaps, which is all SQLite gets.
"""

from django.db import migrations

CONSTRAINT = "booking_no_overlap_per_organizer"

CREATE = f"""
CREATE EXTENSION IF NOT EXISTS btree_gist;
ALTER TABLE scheduling_booking ADD CONSTRAINT {CONSTRAINT}
    EXCLUDE USING gist (organizer_id WITH =, tstzrange(start_time, end_time, '[)') WITH &&)
    WHERE (status IN ('ACCEPTED', 'PENDING'));
"""

DROP = f"ALTER TABLE scheduling_booking DROP CONSTRAINT IF EXISTS {CONSTRAINT};"


def create_constraint(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(CREATE)


def drop_constraint(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP)


class Migration(migrations.Migration):
    dependencies = [("scheduling", "0001_initial")]

    operations = [migrations.RunPython(create_constraint, drop_constraint, elidable=False)]
