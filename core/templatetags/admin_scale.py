"""`{% scaled_date_hierarchy cl %}`: Django's date hierarchy, without reading the whole table.

Django lists the years (months, days) that have rows with `SELECT DISTINCT date_trunc(...)` over
every row of the list. Here the candidates come from the list's first and last dates (two probes at
the ends of the field's index), and one query asks, for each candidate period, whether a row lies in
it (`LIMIT 1` per period, a probe of the same index). A short list (a search, a narrow filter: at
most `READ_DATES_UP_TO` rows, counted exactly) reads its dates once instead, so that its filter runs
once rather than once per period. Same links, same template, same parameters.
"""

import datetime

from django import template
from django.contrib.admin.templatetags.base import InclusionAdminNode
from django.contrib.admin.utils import get_fields_from_path
from django.db import models
from django.utils import formats, timezone
from django.utils.text import capfirst
from django.utils.translation import gettext as _

register = template.Library()


def _month_after(day: datetime.date) -> datetime.date:
    return (day.replace(day=1) + datetime.timedelta(days=32)).replace(day=1)


# A list of at most this many rows (counted exactly: a search, a narrow filter) reads its dates
# once and places them in the periods, rather than probing each period with the list's filter again.
READ_DATES_UP_TO = 1_000


def _periods_with_rows(cl, field_name: str, is_datetime: bool, periods) -> set[int]:
    """The indexes of the `(first_day, day_after)` periods in which the list has a row."""
    queryset = cl.queryset
    if cl.result_count <= READ_DATES_UP_TO and not getattr(cl.paginator, "is_estimate", False):
        found = set()
        for value in queryset.order_by().values_list(field_name, flat=True)[: READ_DATES_UP_TO + 1]:
            if value is None:
                continue
            if is_datetime and timezone.is_aware(value):
                value = timezone.localtime(value)
            day = value.date() if isinstance(value, datetime.datetime) else value
            found.update(index for index, (start, end) in enumerate(periods) if start <= day < end)
        return found

    def bound(day: datetime.date):
        return timezone.make_aware(datetime.datetime.combine(day, datetime.time.min)) if is_datetime else day

    probes = [
        # Ordered by the field, so each probe reads the field's index from the period's start.
        queryset.order_by(field_name)
        .filter(**{f"{field_name}__gte": bound(start), f"{field_name}__lt": bound(end)})
        .values(period=models.Value(index))[:1]
        for index, (start, end) in enumerate(periods)
    ]
    if not probes:
        return set()
    rows = probes[0].union(*probes[1:], all=True) if len(probes) > 1 else probes[0]
    return {row["period"] for row in rows}


def scaled_date_hierarchy(cl):
    field_name = cl.date_hierarchy
    is_datetime = isinstance(get_fields_from_path(cl.model, field_name)[-1], models.DateTimeField)
    year_field, month_field, day_field = (f"{field_name}__{part}" for part in ("year", "month", "day"))
    year_lookup, month_lookup, day_lookup = (cl.params.get(name) for name in (year_field, month_field, day_field))

    def link(filters):
        return cl.get_query_string(filters, [f"{field_name}__"])

    def local_date(value):
        if is_datetime and timezone.is_aware(value):
            value = timezone.localtime(value)
        return value.date() if isinstance(value, datetime.datetime) else value

    first = last = None
    if not (year_lookup or month_lookup or day_lookup):
        # Start at the level below the list's span, as Django does.
        span = cl.queryset.order_by().aggregate(first=models.Min(field_name), last=models.Max(field_name))
        if span["first"] is None or span["last"] is None:
            return {"show": True, "back": None, "choices": []}
        first, last = local_date(span["first"]), local_date(span["last"])
        if first.year == last.year:
            year_lookup = first.year
            if first.month == last.month:
                month_lookup = first.month

    if year_lookup and month_lookup and day_lookup:
        day = datetime.date(int(year_lookup), int(month_lookup), int(day_lookup))
        return {
            "show": True,
            "back": {
                "link": link({year_field: year_lookup, month_field: month_lookup}),
                "title": capfirst(formats.date_format(day, "YEAR_MONTH_FORMAT")),
            },
            "choices": [{"title": capfirst(formats.date_format(day, "MONTH_DAY_FORMAT"))}],
        }
    if year_lookup and month_lookup:
        month = datetime.date(int(year_lookup), int(month_lookup), 1)
        days = [month + datetime.timedelta(days=offset) for offset in range((_month_after(month) - month).days)]
        periods = [(day, day + datetime.timedelta(days=1)) for day in days]
        with_rows = _periods_with_rows(cl, field_name, is_datetime, periods)
        return {
            "show": True,
            "back": {"link": link({year_field: year_lookup}), "title": str(year_lookup)},
            "choices": [
                {
                    "link": link({year_field: year_lookup, month_field: month_lookup, day_field: day.day}),
                    "title": capfirst(formats.date_format(day, "MONTH_DAY_FORMAT")),
                }
                for index, day in enumerate(days)
                if index in with_rows
            ],
        }
    if year_lookup:
        months = [datetime.date(int(year_lookup), number, 1) for number in range(1, 13)]
        periods = [(month, _month_after(month)) for month in months]
        with_rows = _periods_with_rows(cl, field_name, is_datetime, periods)
        return {
            "show": True,
            "back": {"link": link({}), "title": _("All dates")},
            "choices": [
                {
                    "link": link({year_field: year_lookup, month_field: month.month}),
                    "title": capfirst(formats.date_format(month, "YEAR_MONTH_FORMAT")),
                }
                for index, month in enumerate(months)
                if index in with_rows
            ],
        }
    years = list(range(first.year, last.year + 1))
    periods = [(datetime.date(year, 1, 1), datetime.date(year + 1, 1, 1)) for year in years]
    with_rows = _periods_with_rows(cl, field_name, is_datetime, periods)
    return {
        "show": True,
        "back": None,
        "choices": [
            {"link": link({year_field: str(year)}), "title": str(year)}
            for index, year in enumerate(years)
            if index in with_rows
        ],
    }


@register.tag(name="scaled_date_hierarchy")
def scaled_date_hierarchy_tag(parser, token):
    return InclusionAdminNode(
        parser, token, func=scaled_date_hierarchy, template_name="date_hierarchy.html", takes_context=False
    )
