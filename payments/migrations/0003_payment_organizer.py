import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    """Each payment holds its booking's organizer: added empty, filled from the bookings, then
    required and indexed with the payment's id (an organizer's payments in the list's order)."""

    dependencies = [
        ("payments", "0002_external_id_prefix_index"),
        ("scheduling", "0008_merge_0007_booking_list_order_indexes_0007_team_hosts"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="payment",
            name="organizer",
            field=models.ForeignKey(
                db_index=False,
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.RunSQL(
            "UPDATE payments_payment AS payment SET organizer_id = booking.organizer_id "
            "FROM scheduling_booking AS booking WHERE booking.id = payment.booking_id",
            migrations.RunSQL.noop,
        ),
        migrations.AlterField(
            model_name="payment",
            name="organizer",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AddIndex(
            model_name="payment",
            index=models.Index(fields=["organizer", "id"], name="payment_organizer_order"),
        ),
    ]
