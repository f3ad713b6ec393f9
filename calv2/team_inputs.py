"""v2 bodies of team event types: Cal.com's `CreateTeamEventTypeInput_2024_06_14` hosts."""

from rest_framework import serializers

from calv2.inputs import EventTypeCreateInput, V2Input

# Cal.com v2's priority names, lowest first: the position is the stored priority (0-4).
PRIORITIES = ("lowest", "low", "medium", "high", "highest")
# v2's scheduling type names → the stored ones.
SCHEDULING_TYPES = {"collective": "COLLECTIVE", "roundRobin": "ROUND_ROBIN"}


class TeamHostInput(V2Input):
    user_id = serializers.IntegerField(min_value=1)
    mandatory = serializers.BooleanField(required=False, default=False)
    priority = serializers.ChoiceField(choices=PRIORITIES, required=False, default="medium")
    weight = serializers.IntegerField(min_value=0, max_value=2**31 - 1, required=False, default=100)


class TeamEventTypeCreateInput(EventTypeCreateInput):
    scheduling_type = serializers.ChoiceField(choices=sorted(SCHEDULING_TYPES))
    hosts = TeamHostInput(many=True, required=False, max_length=500)
    assign_all_team_members = serializers.BooleanField(required=False)


class TeamEventTypeUpdateInput(TeamEventTypeCreateInput):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, partial=True, **kwargs)


def host_fields(data: dict) -> dict:
    """v2's host names → the event type service's (`mandatory` is `is_fixed`, priorities by name)."""
    fields = dict(data)
    if "scheduling_type" in fields:
        fields["scheduling_type"] = SCHEDULING_TYPES[fields["scheduling_type"]]
    if "hosts" in fields:
        fields["hosts"] = [
            {
                "user_id": host["user_id"],
                "is_fixed": host["mandatory"],
                "priority": PRIORITIES.index(host["priority"]),
                "weight": host["weight"],
            }
            for host in fields["hosts"]
        ]
    return fields
