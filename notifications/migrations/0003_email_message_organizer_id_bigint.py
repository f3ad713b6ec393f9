from django.db import migrations, models

# User ids are bigint; the outbox kept its organizer's id as an int4, so a booking by a user whose id
# is above 2**31-1 failed when its e-mails were queued.


class Migration(migrations.Migration):
    dependencies = [("notifications", "0002_invitations_keep_their_sent_uid")]

    operations = [
        migrations.AlterField(
            model_name="emailmessage",
            name="organizer_id",
            field=models.BigIntegerField(db_index=True),
        ),
    ]
