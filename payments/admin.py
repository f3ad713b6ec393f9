"""Staff inspect payments here; they cannot add, edit or delete them.

The only writes are the "mark paid" / "mark refunded" actions, which go through
`payments.services` like every other write.
"""

from decimal import Decimal

from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.utils import timezone
from django.utils.html import format_html

from core.admin_scale import (
    PREFIX,
    PREFIX_ANY_CASE,
    ScaledAdminMixin,
    SearchField,
    autocomplete_filter,
    indexed_values_filter,
)
from payments.models import Payment
from payments.services import payment_mark_paid, payment_mark_refunded

# ISO 4217 minor-unit exponents that are not 2 (the common case).
CURRENCY_EXPONENTS = {
    **dict.fromkeys("bif clp djf gnf isk jpy kmf krw pyg rwf ugx vnd vuv xaf xof xpf".split(), 0),
    **dict.fromkeys("bhd iqd jod kwd lyd omr tnd".split(), 3),
}


def format_money(amount: int, currency: str) -> str:
    """Minor units to major units with the currency code: (5000, "usd") -> "50.00 USD"."""
    exponent = CURRENCY_EXPONENTS.get(currency.lower(), 2)
    major = Decimal(amount).scaleb(-exponent)
    return f"{major:,.{exponent}f} {currency.upper()}"


@admin.register(Payment)
class PaymentAdmin(ScaledAdminMixin, admin.ModelAdmin):
    # Seven narrow columns, so that the list fits a 1400 px window beside its filters: the booking uid
    # never wraps, the payment uid is shortened (in full on hover, on the payment's page and in search).
    list_display = ("short_uid", "booking_uid", "organizer_email", "amount_with_fee", "state", "app", "created_short")
    list_display_links = ("short_uid",)
    list_filter = (
        "success",
        "refunded",
        indexed_values_filter("currency"),
        "payment_option",
        "app",
        autocomplete_filter("booking__organizer", "organizer"),
        "created_at",
    )
    # What staff paste: a payment uid, the payment provider's charge id, a booking uid or the
    # organiser's e-mail; each is read from its own index (core.admin_scale).
    search_by = (
        SearchField("uid", "payment uid", PREFIX),
        SearchField("external_id", "charge id", PREFIX),
        SearchField("booking__uid", "booking uid", PREFIX),
        SearchField("booking__organizer__email", "organizer e-mail", PREFIX_ANY_CASE),
    )
    change_list_template = "admin/payments/payment/change_list.html"
    list_select_related = ("booking__organizer", "app")
    date_hierarchy = "created_at"
    ordering = ("-id",)  # newest first: what staff look for, and what the date hierarchy's recent periods read
    fields = (
        "uid",
        "booking",
        "organizer_email",
        "app",
        "amount_display",
        "fee_display",
        "success",
        "refunded",
        "payment_option",
        "external_id",
        "data",
        "created_at",
    )
    readonly_fields = fields
    actions = ("mark_paid", "mark_refunded")

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("booking__organizer", "app")

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def has_mark_permission(self, request):
        """Settling is the one thing staff may do to a payment; it needs the change permission."""
        return request.user.has_perm("payments.change_payment")

    @admin.display(description="uid", ordering="uid")
    def short_uid(self, payment):
        shown = payment.uid if len(payment.uid) <= 12 else f"{payment.uid[:8]}…"
        return format_html('<span class="payment-uid" title="{}">{}</span>', payment.uid, shown)

    @admin.display(description="booking", ordering="booking__uid")
    def booking_uid(self, payment):
        return format_html('<span class="booking-uid">{}</span>', payment.booking.uid)

    @admin.display(description="amount (fee)", ordering="amount")
    def amount_with_fee(self, payment):
        return format_html(
            '{}<br><span class="quiet">fee {}</span>',
            format_money(payment.amount, payment.currency),
            format_money(payment.fee, payment.currency),
        )

    @admin.display(description="state")
    def state(self, payment):
        state = "refunded" if payment.refunded else "paid" if payment.success else "not paid"
        return format_html('{}<br><span class="quiet">{}</span>', state, payment.get_payment_option_display())

    @admin.display(description="created", ordering="created_at")
    def created_short(self, payment):
        return f"{timezone.localtime(payment.created_at):%Y-%m-%d %H:%M}"

    @admin.display(description="organizer", ordering="booking__organizer__email")
    def organizer_email(self, payment):
        return payment.booking.organizer.email

    @admin.display(description="amount", ordering="amount")
    def amount_display(self, payment):
        return format_money(payment.amount, payment.currency)

    @admin.display(description="fee", ordering="fee")
    def fee_display(self, payment):
        return format_money(payment.fee, payment.currency)

    @admin.action(description="Mark selected payments as paid", permissions=("mark",))
    def mark_paid(self, request, queryset):
        for payment in queryset:
            payment_mark_paid(payment=payment)
        self.message_user(request, f"Marked {len(queryset)} payment(s) as paid.", messages.SUCCESS)

    @admin.action(description="Mark selected payments as refunded", permissions=("mark",))
    def mark_refunded(self, request, queryset):
        refunded = 0
        for payment in queryset:
            try:
                payment_mark_refunded(payment=payment)
                refunded += 1
            except ValidationError as error:
                self.message_user(request, " ".join(error.messages), messages.ERROR)
        if refunded:
            self.message_user(request, f"Marked {refunded} payment(s) as refunded.", messages.SUCCESS)
