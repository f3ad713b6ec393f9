"""Bookings on the wire."""

import re
from collections.abc import Mapping

from rest_framework import serializers

from core.datetimes import is_supported_instant
from core.fastpath import reads
from core.ical import ical_uid
from core.serializers import ApiSerializer, BoundedJSONField, CompactEventTypeSerializer, CompactUserSerializer
from scheduling.models import BookingStatus
from scheduling.serializers.schedules import TimeZoneField
from scheduling.services.booking_requests import BookingRequest


class InstantField(serializers.DateTimeField):
    """An ISO 8601 date-time with any offset, normalised to UTC; years 1900–9000."""

    def to_internal_value(self, value):
        instant = super().to_internal_value(value)
        if not is_supported_instant(instant):
            raise serializers.ValidationError("Must be between the years 1900 and 9000.")
        return instant


def _has_nul(value) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_has_nul(key) or _has_nul(item) for key, item in value.items())
    if isinstance(value, list):
        return any(_has_nul(item) for item in value)
    return False


class MetadataField(BoundedJSONField):
    """A JSON object, bounded in depth, keys, string length and size (docs/api.md, "Limits"), so
    that a stored booking always renders; NUL is refused (PostgreSQL's jsonb cannot store it)."""


class AttendeeSerializer(ApiSerializer):
    id = serializers.IntegerField(read_only=True)
    name = serializers.CharField(read_only=True)
    email = serializers.EmailField(read_only=True)
    time_zone = serializers.CharField(read_only=True)
    locale = serializers.CharField(read_only=True)


class BookingTeamMemberSerializer(ApiSerializer):
    """A host attending a team booking beside its organizer: the compact user."""

    id = serializers.IntegerField(source="user_id", read_only=True)
    username = serializers.CharField(source="user.username", read_only=True)
    name = serializers.CharField(source="user.name", read_only=True)
    email = serializers.EmailField(source="user.email", read_only=True)
    time_zone = serializers.CharField(source="user.time_zone", read_only=True)


class BookingSerializer(ApiSerializer):
    id = serializers.IntegerField(read_only=True)
    uid = serializers.CharField(read_only=True)
    user_id = serializers.IntegerField(source="organizer_id", read_only=True)
    user = CompactUserSerializer(source="organizer", read_only=True)
    event_type_id = serializers.IntegerField(read_only=True, allow_null=True)
    event_type = CompactEventTypeSerializer(read_only=True, allow_null=True)
    title = serializers.CharField(read_only=True)
    description = serializers.CharField(read_only=True)
    start_time = serializers.DateTimeField(read_only=True)
    end_time = serializers.DateTimeField(read_only=True)
    status = serializers.CharField(read_only=True)
    location = serializers.CharField(read_only=True)
    metadata = serializers.JSONField(read_only=True)
    responses = serializers.JSONField(read_only=True)
    custom_inputs = serializers.JSONField(read_only=True)
    sms_reminder_number = serializers.SerializerMethodField()
    attendees = AttendeeSerializer(many=True, read_only=True)
    team_members = BookingTeamMemberSerializer(
        source="team_hosts",
        many=True,
        read_only=True,
        help_text="A team booking's other hosts (every other host of a collective event type, the fixed "
        "hosts of a round-robin one); empty for other bookings.",
    )
    cancellation_reason = serializers.SerializerMethodField()
    cancelled_by = serializers.SerializerMethodField()
    rescheduled = serializers.BooleanField(read_only=True)
    # Cal.com's name for the uid of the booking this one replaced.
    from_reschedule = serializers.CharField(source="rescheduled_from.uid", read_only=True, allow_null=True)
    i_cal_sequence = serializers.IntegerField(source="ical_sequence", read_only=True)
    # Named so that it reads `iCalUID` on the wire, as Cal.com spells it.
    i_cal_u_i_d = serializers.SerializerMethodField(
        help_text="The calendar event's UID: `<uid>@Cal.com`, or, for a booking made by rescheduling, "
        "the first booking's (the meeting's event keeps its UID)."
    )
    recurring_event_id = serializers.SerializerMethodField(
        help_text="Shared by the occurrences of a recurring series; null for a one-off booking."
    )
    created_at = serializers.DateTimeField(read_only=True)
    updated_at = serializers.DateTimeField(read_only=True)

    @reads("recurring_event_id")
    def get_recurring_event_id(self, booking) -> str | None:
        return booking.recurring_event_id or None

    @reads("ical_uid", "uid")
    def get_i_cal_u_i_d(self, booking) -> str:
        return ical_uid(booking)

    @reads("sms_reminder_number")
    def get_sms_reminder_number(self, booking) -> str | None:
        return booking.sms_reminder_number or None

    @reads("cancellation_reason")
    def get_cancellation_reason(self, booking) -> str | None:
        return booking.cancellation_reason or None

    @reads("cancelled_by")
    def get_cancelled_by(self, booking) -> str | None:
        return booking.cancelled_by or None


class PaymentSummarySerializer(ApiSerializer):
    id = serializers.IntegerField()
    uid = serializers.CharField()
    success = serializers.BooleanField()
    payment_option = serializers.CharField()


class BookingCreatedSerializer(BookingSerializer):
    """The answer to POST /bookings, as Cal.com v1's: the booking object at the top level with its
    payments; `paymentUid`/`paymentId` only when a payment is required (documents the body: they
    are optional keys, left out of an unpaid booking's answer)."""

    payment = PaymentSummarySerializer(many=True, read_only=True)
    payment_required = serializers.BooleanField(read_only=True)
    payment_uid = serializers.CharField(read_only=True, required=False)
    payment_id = serializers.IntegerField(read_only=True, required=False)
    creation_source = serializers.ChoiceField(choices=["API_V1"], read_only=True, help_text="As Cal.com v1 said.")


def _location_text(value) -> str:
    """A location as Cal.com v1 clients send it: a string, or `{"value", "optionValue"}` of which
    the first non-empty part is the location."""
    if _has_nul(value):
        raise serializers.ValidationError("Must not contain NUL characters.")
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and set(value) <= {"value", "optionValue"}:
        parts = [value.get("optionValue"), value.get("value")]
        if all(isinstance(part, str | None) for part in parts):
            return next((part for part in parts if part), "")
    raise serializers.ValidationError('Must be a string or {"value": ..., "optionValue": ...}.')


class StrictIntegerField(serializers.IntegerField):
    """A JSON number, not a numeric string: Cal.com v1 refused `"eventTypeId": "7"`."""

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int | float):
            raise serializers.ValidationError("Must be a number.")
        return super().to_internal_value(data)


class GuestsField(serializers.ListField):
    """Extra attendees' emails; repeated ones (in any letter case) count once."""

    def __init__(self, **kwargs):
        super().__init__(child=serializers.EmailField(max_length=254), max_length=50, **kwargs)

    def to_internal_value(self, data):
        guests, seen = [], set()
        for email in super().to_internal_value(data):
            if email.lower() not in seen:
                seen.add(email.lower())
                guests.append(email)
        return guests


class SmsNumberField(serializers.CharField):
    """A phone number for SMS reminders; Cal.com v1's documentation called it a number, its schema a
    string, so both are taken. `null` means none."""

    def __init__(self, **kwargs):
        super().__init__(max_length=50, allow_blank=True, allow_null=True, required=False, **kwargs)

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, str | int):
            raise serializers.ValidationError("Must be a string.")
        return super().to_internal_value(str(data))


class LocationAndNotesMixin:
    """`location` and `notes` as v1 accepted them, at the top level of the body or in `responses`."""

    def validate_location(self, value):
        return _location_text(value)

    def validate_notes(self, value):
        if _has_nul(value):
            raise serializers.ValidationError("Must not contain NUL characters.")
        return value


class CustomInputSerializer(ApiSerializer):
    label = serializers.CharField(max_length=500)
    value = serializers.JSONField()

    def validate_value(self, value):
        if not isinstance(value, str | bool):
            raise serializers.ValidationError("Must be a string or a boolean.")
        if _has_nul(value):
            raise serializers.ValidationError("Must not contain NUL characters.")
        return value


class V1ResponsesSerializer(LocationAndNotesMixin, ApiSerializer):
    """Cal.com v1's `responses` object: the booking form's answers. Its system fields are known;
    this service has no custom booking questions, so any other key is refused."""

    name = serializers.CharField(max_length=200, required=False)
    email = serializers.EmailField(max_length=254, required=False)
    location = serializers.JSONField(required=False, help_text='A string, or {"value", "optionValue"}.')
    notes = serializers.CharField(required=False, allow_blank=True, allow_null=True)
    guests = GuestsField(required=False)
    title = serializers.CharField(max_length=500, required=False, allow_blank=True)
    reschedule_reason = serializers.CharField(required=False, allow_blank=True, max_length=5000)
    sms_reminder_number = SmsNumberField()
    attendee_phone_number = serializers.CharField(max_length=50, required=False, allow_blank=True)
    # Cal.com's own v1 reference example sends it inside `responses`.
    metadata = MetadataField(required=False)


class DryRunField(serializers.BooleanField):
    def to_internal_value(self, data):
        if super().to_internal_value(data):
            raise serializers.ValidationError("Dry runs are not supported: a booking request books.")
        return False


def _only_when_empty(feature: str):
    """A validator for a v1 field that asks for something this service does not do: its empty value
    (`false`, `""`, `[]`, `{}`, `0`; `null` never reaches a validator), which Cal.com's own clients
    send by default, is accepted; anything else is a 400 naming the field, so that a client never
    believes it got what it asked for."""

    def check(value):
        if value:
            raise serializers.ValidationError(
                f'Not supported: {feature}. Send it empty (null, false, [] or "") or leave it out.'
            )

    return check


# Cal.com splits a dynamic group's `user` ("ada+alan") on these.
_USERNAME_SEPARATORS = re.compile(r"\+|%2b|%20| ", re.IGNORECASE)


def _one_user_at_most(value):
    """Cal.com v1's `user`: the username(s) of the booking page. One name (the page the booking
    was made from; the event type decides the host, as in Cal.com when `eventTypeId` is sent) is
    accepted; several are a dynamic group booking, which this service does not do."""
    if isinstance(value, str):
        names = [name for name in _USERNAME_SEPARATORS.split(value) if name]
    elif isinstance(value, list) and all(isinstance(name, str) for name in value):
        names = [name for name in value if name]
    else:
        raise serializers.ValidationError("Must be a string or a list of strings.")
    if len({name.lower() for name in names}) > 1:
        raise serializers.ValidationError(
            "Not supported: dynamic group bookings of several users. Book one event type (eventTypeId)."
        )


def _v1_fields_without_effect() -> dict[str, serializers.Field]:
    """Fields of Cal.com v1's booking body that this service does not honour, by their wire names
    (some are not camelCase), checked for their v1 type and then dropped (docs/scheduling.md has the
    table). Those that would change what the booking is (seats, round-robin and
    routing hosts, CRM owners, organizations, group bookings) are accepted only empty; the rest are
    cosmetic: e-mail switches, attribution, bot challenges, cache hints."""
    text = {"required": False, "allow_blank": True, "max_length": 5000}
    nullable_text = {**text, "allow_null": True}
    flag = {"required": False}
    number = {"required": False, "allow_null": True}
    seats = _only_when_empty("seated event types (seats in a booking)")
    routing = _only_when_empty("round-robin hosts, routing forms and CRM contact owners")
    cosmetic = {
        "noEmail": serializers.BooleanField(**flag),
        "appsStatus": serializers.ListField(child=serializers.DictField(), required=False),
        "user": serializers.JSONField(required=False, allow_null=True, validators=[_one_user_at_most]),
        "skipContactOwner": serializers.BooleanField(**flag),
        "cfToken": serializers.CharField(**nullable_text),
        "tracking": serializers.DictField(child=serializers.CharField(max_length=500), required=False),
        "dub_id": serializers.CharField(**nullable_text),
        "creationSource": serializers.CharField(**text),
        "verificationCode": serializers.CharField(**text),
        "hasHashedBookingLink": serializers.BooleanField(**flag),  # `hashedLink` says which link
        "rescheduledBy": serializers.EmailField(required=False, max_length=254),
        "_shouldServeCache": serializers.BooleanField(**flag),
        "_isDryRun": DryRunField(**flag),
        # In v1's reference example, not in its schema: v1 dropped them, and so does this service.
        "status": serializers.CharField(**text),
        "seatsShowAttendees": serializers.BooleanField(**flag),
        "seatsShowAvailabilityCount": serializers.BooleanField(**flag),
    }
    for field in cosmetic.values():
        field.help_text = "Accepted for Cal.com v1 clients; has no effect here (see docs/scheduling.md)."
    cosmetic[
        "user"
    ].help_text = "The booking page's username: one name has no effect here; several (a dynamic group) are a 400."
    only_empty = {
        "seatReferenceUid": serializers.CharField(**text, validators=[seats]),
        "bookingUid": serializers.CharField(**text, validators=[seats]),
        "seatsPerTimeSlot": serializers.IntegerField(**number, validators=[seats]),
        "luckyUsers": serializers.ListField(child=serializers.IntegerField(), required=False, validators=[routing]),
        "routedTeamMemberIds": serializers.ListField(
            child=serializers.IntegerField(), required=False, allow_null=True, validators=[routing]
        ),
        "routingFormResponseId": serializers.IntegerField(**number, validators=[routing]),
        "reroutingFormResponses": serializers.DictField(required=False, validators=[routing]),
        "teamMemberEmail": serializers.CharField(**nullable_text, validators=[routing]),
        "crmOwnerRecordType": serializers.CharField(**nullable_text, validators=[routing]),
        "crmRecordId": serializers.CharField(**nullable_text, validators=[routing]),
        "crmAppSlug": serializers.CharField(**nullable_text, validators=[routing]),
        "orgSlug": serializers.CharField(**text, validators=[_only_when_empty("organizations")]),
    }
    for field in only_empty.values():
        field.help_text = "Accepted for Cal.com v1 clients only empty: not supported here (see docs/scheduling.md)."
    return {**cosmetic, **only_empty}


V1_FIELDS_WITHOUT_EFFECT = tuple(_v1_fields_without_effect())


class RecurringEventIdField(serializers.CharField):
    """A series id; Cal.com's booker sends a uuid string, v1's documentation called it an integer,
    so a JSON number is taken as its digits."""

    def __init__(self, **kwargs):
        super().__init__(max_length=100, required=False, allow_null=True, **kwargs)

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, str | int):
            raise serializers.ValidationError("Must be a string.")
        value = super().to_internal_value(str(data))
        if not value.strip():
            raise serializers.ValidationError("Must not be blank.")
        return value


class RecurringDateSerializer(ApiSerializer):
    """One entry of Cal.com's `allRecurringDates`: an occurrence's start (and end)."""

    start = InstantField()
    end = InstantField(required=False, allow_null=True)


# An id of something the booking uses (a reservation, a private link): empty or null means none.
OPTIONAL_ID = {"max_length": 64, "required": False, "allow_blank": True, "allow_null": True}


class BookingCreateSerializer(LocationAndNotesMixin, ApiSerializer):
    """Cal.com v1's booking body. The attendee is `name`/`email` at the top level or, as later v1
    clients send it, inside `responses`; the two shapes are equivalent and the top level wins.
    Every other field v1 accepted is known: honoured, or checked and dropped (docs/scheduling.md)."""

    event_type_id = StrictIntegerField(help_text="Must be a JSON number, as in Cal.com v1.")
    event_type_slug = serializers.CharField(
        max_length=200,
        required=False,
        allow_blank=True,
        allow_null=True,
        help_text="If sent (not empty), must be the slug of the event type `eventTypeId` names.",
    )
    user_id = serializers.IntegerField(
        required=False,
        allow_null=True,
        help_text="Cal.com v1's booking on behalf of a user: only the caller's own id (another user's is a 403, "
        "or a 400 for a system admin: bookings are made as the caller).",
    )
    start = InstantField(help_text="A slot's time as GET /slots lists it (any offset).")
    end = InstantField(required=False, allow_null=True, help_text="If sent, must be start + the event type's length.")
    name = serializers.CharField(max_length=200, required=False, help_text="The attendee's name.")
    email = serializers.EmailField(max_length=254, required=False, help_text="The attendee's email.")
    time_zone = TimeZoneField(help_text="The attendee's IANA time zone.")
    language = serializers.CharField(
        max_length=35, required=False, allow_blank=True, help_text="The attendee's locale (default en)."
    )
    title = serializers.CharField(max_length=500, required=False, allow_blank=True, allow_null=True)
    description = serializers.CharField(required=False, allow_blank=True, allow_null=True)
    notes = serializers.CharField(required=False, allow_blank=True, allow_null=True, help_text="Same as description.")
    location = serializers.JSONField(required=False, help_text='A string, or {"value", "optionValue"}.')
    guests = GuestsField(required=False, help_text="Emails of extra attendees.")
    metadata = MetadataField(required=False)
    responses = V1ResponsesSerializer(required=False, help_text="Cal.com v1 form answers.")
    custom_inputs = CustomInputSerializer(many=True, required=False, help_text="[{label, value}], stored by label.")
    sms_reminder_number = SmsNumberField()
    reschedule_uid = serializers.CharField(
        max_length=64, required=False, help_text="Book a new time for this booking (see docs/scheduling.md)."
    )
    reserved_slot_uid = serializers.CharField(
        **OPTIONAL_ID,
        help_text="The booker's slot reservation holding this slot (v2's `reservationUid`): the booking takes the "
        "held slot and frees it. A uid naming no reservation frees nothing.",
    )
    hashed_link = serializers.CharField(
        **OPTIONAL_ID,
        help_text="A private link of the event type (its `linkId`): books it even when hidden, and counts one "
        "use of a usage-based link. Unknown, expired or used up: a 400.",
    )
    reschedule_reason = serializers.CharField(required=False, allow_blank=True, max_length=5000)
    recurring_count = serializers.IntegerField(
        min_value=1,
        required=False,
        allow_null=True,
        help_text="A recurring event type: book this many occurrences (1 to its `recurringEvent.count`), all "
        "or none. The answer is the first occurrence (see docs/scheduling.md, Recurring series).",
    )
    recurring_event_id = RecurringEventIdField(
        help_text="The series an occurrence belongs to (with `allRecurringDates` and `currentRecurringIndex`), "
        "or the id to give a series booked with `recurringCount` (default: a new uuid)."
    )
    all_recurring_dates = RecurringDateSerializer(
        many=True,
        required=False,
        allow_null=True,
        help_text="Every occurrence of the series, first to last; with `currentRecurringIndex`, this request "
        "books the occurrence of that index.",
    )
    current_recurring_index = serializers.IntegerField(min_value=0, required=False, allow_null=True)

    def get_fields(self):
        return {**super().get_fields(), **_v1_fields_without_effect()}

    def to_internal_value(self, data):
        # Report a missing attendee together with the other field errors, not in a second round.
        errors, attrs = {}, None
        try:
            attrs = super().to_internal_value(data)
        except serializers.ValidationError as error:
            errors = dict(error.detail) if isinstance(error.detail, dict) else {"non_field_errors": error.detail}
        if isinstance(data, Mapping):
            responses = data.get("responses") if isinstance(data.get("responses"), Mapping) else {}
            for field in ("name", "email"):
                if field not in data and field not in responses and field not in errors:
                    errors[field] = ["This field is required."]
        if errors:
            raise serializers.ValidationError(errors)
        return attrs

    def validate(self, attrs):
        for name in V1_FIELDS_WITHOUT_EFFECT:
            attrs.pop(name, None)
        link = attrs.pop("hashed_link", None)
        if link:
            attrs["private_link"] = link
        reservation = attrs.pop("reserved_slot_uid", None)
        if reservation:
            attrs["reservation_uid"] = reservation
        for name in ("event_type_slug", "user_id"):
            if attrs.get(name) in (None, ""):
                attrs.pop(name, None)
        for name in ("recurring_count", "recurring_event_id", "all_recurring_dates", "current_recurring_index"):
            if attrs.get(name) is None:
                attrs.pop(name, None)
        if ("all_recurring_dates" in attrs) != ("current_recurring_index" in attrs):
            missing = "currentRecurringIndex" if "all_recurring_dates" in attrs else "allRecurringDates"
            raise serializers.ValidationError({missing: ["Required to book one occurrence of a series."]})
        if "all_recurring_dates" in attrs:
            if "recurring_event_id" not in attrs:
                required = ["Required to book one occurrence of a series."]
                raise serializers.ValidationError({"recurringEventId": required})
            if not attrs["all_recurring_dates"]:
                raise serializers.ValidationError({"allRecurringDates": ["Must list at least one occurrence."]})
            attrs["all_recurring_dates"] = [item["start"] for item in attrs["all_recurring_dates"]]
        if attrs.get("reschedule_uid") is not None and {"recurring_count", "all_recurring_dates"} & set(attrs):
            raise serializers.ValidationError(
                {"rescheduleUid": ["Reschedule one occurrence at a time, without recurringCount or allRecurringDates."]}
            )
        responses = attrs.pop("responses", {})
        for field in ("name", "email", "location", "guests", "title", "reschedule_reason", "sms_reminder_number"):
            if field not in attrs and field in responses:
                attrs[field] = responses[field]
        for field in ("description", "notes"):
            if attrs.get(field) is None:
                attrs.pop(field, None)
        notes = attrs.pop("notes", None) or responses.get("notes")
        if "description" not in attrs and notes:
            attrs["description"] = notes
        if attrs.get("title") is None:
            attrs.pop("title", None)
        if attrs.get("end") is None:
            attrs.pop("end", None)
        missing = {field: ["This field is required."] for field in ("name", "email") if field not in attrs}
        if missing:
            raise serializers.ValidationError(missing)
        if len(attrs.get("location", "")) > 1000:
            raise serializers.ValidationError({"location": ["Ensure this field has no more than 1000 characters."]})
        attrs["guests"] = [guest for guest in attrs.get("guests", []) if guest.lower() != attrs["email"].lower()]
        attrs["custom_inputs"] = {item["label"]: item["value"] for item in attrs.get("custom_inputs", [])}
        attrs["sms_reminder_number"] = attrs.get("sms_reminder_number") or ""
        attrs["locale"] = attrs.pop("language", "")  # none: "en", or on a reschedule the attendee's own
        attrs["responses"] = self._stored_responses(attrs)
        return attrs

    def _stored_responses(self, attrs) -> dict:
        """The form answers as Cal.com stores them: as sent (camelCase keys, `location` as sent),
        or for a body in the legacy top-level shape, built from its fields."""
        sent = self.initial_data.get("responses") if isinstance(self.initial_data, Mapping) else None
        if isinstance(sent, Mapping):
            return dict(sent)
        responses = {"name": attrs["name"], "email": attrs["email"]}
        if attrs.get("location"):
            responses["location"] = {"value": attrs["location"], "optionValue": ""}
        if attrs.get("description"):
            responses["notes"] = attrs["description"]
        if attrs["guests"]:
            responses["guests"] = attrs["guests"]
        if attrs.get("reschedule_reason"):
            responses["rescheduleReason"] = attrs["reschedule_reason"]
        return responses


class BookingUpdateSerializer(ApiSerializer):
    """Cal.com v1's edit body (`schemaBookingEditBodyParams`): `title`, `description`, a move in
    time (`startTime`, optional `endTime`), a decision or cancellation (`status`), and v1's
    `userId`, `eventTypeId`, `rescheduledBy`, `cancelledBy` with this service's rules on each
    (docs/scheduling.md). At least one field."""

    title = serializers.CharField(max_length=500, required=False)
    description = serializers.CharField(required=False, allow_blank=True, allow_null=True)
    start_time = InstantField(required=False)
    end_time = InstantField(required=False)
    status = serializers.ChoiceField(
        choices=[BookingStatus.ACCEPTED, BookingStatus.REJECTED, BookingStatus.CANCELLED],
        required=False,
        help_text="ACCEPTED confirms, REJECTED rejects a PENDING booking; CANCELLED cancels, as DELETE does.",
    )
    user_id = StrictIntegerField(
        required=False, min_value=1, help_text="System admins only; must be the current organizer."
    )
    event_type_id = StrictIntegerField(required=False, min_value=1, help_text="Must be the current event type.")
    rescheduled_by = serializers.EmailField(
        required=False, max_length=254, help_text="Accepted for Cal.com v1 clients; not stored."
    )
    cancelled_by = serializers.EmailField(
        required=False, max_length=254, help_text="With status CANCELLED: who cancelled (default: the caller)."
    )

    def validate_description(self, value):
        if _has_nul(value):
            raise serializers.ValidationError("Must not contain NUL characters.")
        return "" if value is None else value

    def validate_title(self, value):
        if _has_nul(value):
            raise serializers.ValidationError("Must not contain NUL characters.")
        return value

    def validate(self, attrs):
        if "status" in attrs and ("start_time" in attrs or "end_time" in attrs):
            raise serializers.ValidationError({"status": ["Send either status or startTime, not both."]})
        if "end_time" in attrs and "start_time" not in attrs:
            raise serializers.ValidationError({"startTime": ["Required when endTime is sent."]})
        if "cancelled_by" in attrs and attrs.get("status") != BookingStatus.CANCELLED:
            raise serializers.ValidationError({"cancelledBy": ['Only with "status": "CANCELLED".']})
        if not attrs:
            raise serializers.ValidationError(
                {"non_field_errors": ["Send at least one of title, description, startTime, status."]}
            )
        attrs.pop("rescheduled_by", None)
        return attrs


class BookingConfirmSerializer(ApiSerializer):
    """Cal.com v1's POST /bookings/{id}/confirm body (`schemeBookingConfirmBodyParams`)."""

    confirmed = serializers.BooleanField(help_text="true confirms, false rejects a PENDING booking.")
    rejection_reason = serializers.CharField(
        required=False,
        allow_blank=True,
        allow_null=True,
        max_length=5000,
        help_text="Accepted for Cal.com v1 clients; not stored (v1 dropped it too).",
    )
    recurring_event_id = serializers.CharField(
        required=False,
        allow_blank=True,
        allow_null=True,
        max_length=200,
        help_text="The booking's series: every PENDING occurrence of it is decided alike, as in Cal.com.",
    )


class BookingConfirmedSerializer(ApiSerializer):
    """The answer to POST /bookings/{id}/confirm: Cal.com v1's `{message, status}`, plus the booking."""

    message = serializers.ChoiceField(choices=["confirmed", "rejected"])
    status = serializers.ChoiceField(choices=[BookingStatus.ACCEPTED, BookingStatus.REJECTED])
    booking = BookingSerializer()


class BookingRescheduleSerializer(ApiSerializer):
    """POST /bookings/{id}/reschedule: the new time of a booking that Cal.com's way gets replaced."""

    start = InstantField(help_text="A slot's time as GET /slots lists it (any offset).")
    end = InstantField(required=False, help_text="If sent, must be start + the event type's length.")
    reschedule_reason = serializers.CharField(required=False, allow_blank=True, max_length=5000)


class BookingRescheduledSerializer(ApiSerializer):
    """The answer to POST /bookings/{id}/reschedule (documents the body)."""

    booking = BookingSerializer(help_text="The new booking.")
    message = serializers.CharField()


class BookingCancelSerializer(ApiSerializer):
    cancellation_reason = serializers.CharField(required=False, allow_blank=True, max_length=5000)
    all_remaining_bookings = serializers.BooleanField(
        required=False,
        help_text="Cal.com's: also cancel every occurrence of the booking's recurring series that has not started.",
    )
    cancel_subsequent_bookings = serializers.BooleanField(
        required=False, help_text="Also cancel every later occurrence of the booking's recurring series."
    )


class BookingCancelledSerializer(ApiSerializer):
    """The answer to a cancellation: Cal.com v1's, plus the cancelled booking."""

    success = serializers.BooleanField()
    message = serializers.CharField()
    only_removed_attendee = serializers.BooleanField()
    booking_id = serializers.IntegerField()
    booking_uid = serializers.CharField()
    booking = BookingSerializer()


def booking_request_from_v1(data: dict, *, actor) -> BookingRequest:
    """Cal.com v1's validated booking body (`BookingCreateSerializer`, also 2024-04-15's of v2) as
    the one booking request every version makes."""
    data = dict(data)
    return BookingRequest(
        actor=actor,
        attendee_name=data.pop("name"),
        attendee_email=data.pop("email"),
        attendee_time_zone=data.pop("time_zone"),
        **data,
    )
