"""`core.fastpath.fields.BuiltOnceFieldsMixin`: a serializer's fields are worked out once per class,
and each instance still has fields of its own, bound to it, that validate as DRF's would."""

import threading

from rest_framework import serializers

from core.fastpath.fields import _instance_copy
from core.serializers import ApiSerializer
from scheduling.serializers.bookings import BookingCreateSerializer


class Item(ApiSerializer):
    label = serializers.CharField(max_length=5)


class Order(ApiSerializer):
    buyer_name = serializers.CharField(max_length=10)
    quantity = serializers.IntegerField(min_value=1)
    tags = serializers.ListField(child=serializers.CharField(max_length=3), required=False)
    notes = serializers.DictField(child=serializers.IntegerField(), required=False)
    items = Item(many=True, required=False)
    first_item = Item(required=False)

    def validate_quantity(self, value):
        return value * self.context.get("multiplier", 1)


def walk(field):
    """The field and every field inside it (a list's item, a nested serializer's fields)."""
    yield field
    child = getattr(field, "child", None)
    if isinstance(child, serializers.Field):
        yield from walk(child)
    if isinstance(field, serializers.Serializer):
        for inner in field.fields.values():
            yield from walk(inner)


def test_each_instance_binds_fields_of_its_own_to_itself():
    first, second = Order(data={}, context={"multiplier": 2}), Order(data={}, context={"multiplier": 3})

    mine, theirs = list(first.fields.values()), list(second.fields.values())

    assert list(first.fields) == ["buyerName", "quantity", "tags", "notes", "items", "firstItem"]
    assert first.fields["firstItem"].source == "first_item" and first.fields["firstItem"].source_attrs == ["first_item"]
    for field in mine:
        assert field.root is first and field.context == {"multiplier": 2}
    shared = {id(field) for field in mine for field in walk(field)} & {
        id(field) for field in theirs for field in walk(field)
    }
    assert not shared
    assert first.fields["tags"].child.parent is first.fields["tags"]
    assert first.fields["tags"].child.source == "" and first.fields["buyerName"].source == "buyer_name"
    prototypes = Order._field_prototypes
    assert all(getattr(field, "parent", None) is None for field in prototypes.values())
    assert all(prototypes[name] is not field for name, field in first.fields.items())


def test_validation_is_drfs_and_each_instance_keeps_its_own_result():
    good = Order(data={"buyerName": "Ada", "quantity": 2, "tags": ["a"], "items": [{"label": "x"}]}, context={})
    bad = Order(data={"buyerName": "A" * 11, "quantity": 0, "tags": ["long"], "notes": {"a": "x"}, "items": [{}]})

    assert good.is_valid() and not bad.is_valid()

    assert good.validated_data == {"buyer_name": "Ada", "quantity": 2, "tags": ["a"], "items": [{"label": "x"}]}
    assert set(bad.errors) == {"buyerName", "quantity", "tags", "notes", "items"}
    assert bad.errors["tags"] == {0: ["Ensure this field has no more than 3 characters."]}
    assert bad.errors["items"] == {0: {"label": ["This field is required."]}}  # DRF's shape for a nested list
    assert Order(data={"buyerName": "Bo", "quantity": 2}, context={"multiplier": 5}).is_valid()


def test_instances_validating_at_once_in_threads_do_not_mix():
    results, barrier = {}, threading.Barrier(8)

    def validate(index):
        serializer = Order(data={"buyerName": f"n{index}", "quantity": index or -1}, context={"multiplier": index})
        barrier.wait()
        valid = serializer.is_valid()
        results[index] = serializer.validated_data["quantity"] if valid else dict(serializer.errors)

    threads = [threading.Thread(target=validate, args=(index,)) for index in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert results[0] == {"quantity": ["Ensure this value is greater than or equal to 1."]}
    assert all(results[index] == index * index for index in range(1, 8))


def test_the_booking_body_has_the_same_fields_as_drf_would_build():
    built_by_drf = BookingCreateSerializer.get_fields(BookingCreateSerializer())
    ours = BookingCreateSerializer(data={}).fields

    assert list(ours) == list(built_by_drf)
    for name, field in ours.items():
        assert type(field) is type(built_by_drf[name]), name
        assert (field.required, field.allow_null, field.read_only) == (
            built_by_drf[name].required,
            built_by_drf[name].allow_null,
            built_by_drf[name].read_only,
        ), name
    assert type(_instance_copy(ours["guests"]).child) is serializers.EmailField
