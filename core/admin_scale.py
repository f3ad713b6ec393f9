"""The admin at production sizes: every changelist reads only the rows it shows.

Django's admin is written for small tables: it counts every row of a list (twice), searches with
`UPPER(column) LIKE '%term%'` OR-ed across joined tables (which no index can serve), lists every
related row in a filter's sidebar, and finds the years, months and days of a date hierarchy with
`SELECT DISTINCT date_trunc(...)` over the whole table. `ScaledAdminMixin` replaces each of those
with a query that an index answers, whatever the size of the table:

- **Counts** (`EstimatedCountPaginator`): exact up to `EXACT_COUNT_LIMIT` matching rows (a count that
  stops reading there), beyond that PostgreSQL's planner estimate, shown as "about N". The total of
  the unfiltered table is not counted at all (`show_full_result_count = False`), and filter counts
  ("facets") are off.
- **Deep pages**: from row `DEFERRED_JOIN_FROM` on, a page first reads the ids of its rows from the
  ordering's index, then the rows with their joins, so that page 1,000 does not join 100,000 rows
  only to skip them.
- **Search** (`SearchField`): each field is searched by the meaning it has for staff, from an index:
  a prefix (an id pasted whole or its first characters), a case-insensitive prefix (an e-mail), or a
  case-insensitive "contains" (a name, a URL) served by a trigram index. Each field is its own
  branch of the list's query (core.fastpath.branches), read in the list's order up to the page's
  end, so a match in a joined table uses that table's index and a broad term stops after a page.
  The search box's help text says which field is searched how.
- **Filters on large relations** (`autocomplete_filter`): a select box fed by the admin's
  autocomplete (the related admin's search), not a list of every row. Distinct values of a column
  (`IndexedValuesFilter`) are read with a skip scan of its index.
- **Date hierarchy** (`templatetags.admin_scale`): each year, month or day shown is one index probe.
"""

import json
from dataclasses import dataclass

from django import forms
from django.contrib import admin
from django.contrib.admin.options import IncorrectLookupParameters
from django.contrib.admin.utils import get_fields_from_path
from django.contrib.admin.widgets import AutocompleteSelect
from django.core.paginator import Paginator
from django.db import connections
from django.db.models import Q, QuerySet
from django.db.models.functions import Lower
from django.db.models.lookups import Contains, StartsWith
from django.utils.functional import cached_property

from core.fastpath.branches import AnyBranch, holds_branches

# Up to this many matching rows a list says exactly how many; beyond, it says "about N".
EXACT_COUNT_LIMIT = 10_000
# Pages that skip at least this many rows read their ids first (see `EstimatedCountPaginator.page`).
DEFERRED_JOIN_FROM = 1_000
# A "contains" search needs a whole trigram to use its index; shorter terms search from the start.
TRIGRAM_MINIMUM = 3


def _newest_first(queryset: QuerySet) -> bool:
    """Whether the queryset is ordered by its primary key, descending, first."""
    ordering = queryset.query.order_by or queryset.model._meta.ordering
    first = ordering[0] if ordering else None
    pk = queryset.model._meta.pk
    return isinstance(first, str) and first.startswith("-") and first[1:] in ("pk", pk.name, pk.attname)


def planner_row_estimate(queryset: QuerySet) -> int:
    """The number of rows PostgreSQL's planner expects `queryset` to return (no rows are read)."""
    plan = json.loads(queryset.order_by().explain(format="json"))
    return int(plan[0]["Plan"]["Plan Rows"])


class EstimatedCountPaginator(Paginator):
    """A paginator whose count costs at most `exact_count_limit` rows read, and whose deep pages
    do not join the rows they skip."""

    exact_count_limit = EXACT_COUNT_LIMIT
    is_estimate = False

    @cached_property
    def count(self) -> int:
        # COUNT(*) of a LIMITed subquery: PostgreSQL stops reading at the limit. The rows are read
        # from the primary key's index (never by a scan of the table, which would read every row
        # when few of them match), in the list's own direction when the list is ordered by it: a
        # newest-first list filtered on recent rows (this year of the date hierarchy) then finds
        # its 10,001 rows at the start of the index, as its page does, instead of after every
        # older row (14 ms against 83 ms at 10^6 payments).
        rows = self.object_list.order_by("-pk" if _newest_first(self.object_list) else "pk")
        if holds_branches(rows.query.where):
            # A search (`indexed_search`): with no order each field's branch stops at the bound in
            # its own index; in the list's order a broad term read 170,000 rows to count 10,001.
            rows = rows.order_by()
        counted = rows[: self.exact_count_limit + 1].count()
        if counted <= self.exact_count_limit:
            return counted
        self.is_estimate = True
        return max(planner_row_estimate(self.object_list), counted)

    def page(self, number):
        number = self.validate_number(number)
        bottom = (number - 1) * self.per_page
        top = bottom + self.per_page
        if top + self.orphans >= self.count:
            top = self.count
        if bottom < DEFERRED_JOIN_FROM:
            return self._get_page(self.object_list[bottom:top], number, self)
        # OFFSET over the ordering's index alone (an index-only scan when ordered by id), then the
        # page's rows with their select_related joins, in the same order.
        ids = list(self.object_list.values_list("pk", flat=True)[bottom:top])
        return self._get_page(self.object_list.filter(pk__in=ids), number, self)


PREFIX = "prefix"
PREFIX_ANY_CASE = "prefix, any case"
CONTAINS = "contains"


@dataclass(frozen=True)
class SearchField:
    """One searched field: `path` as in `search_fields`, the `label` the help text shows, and `how`:

    - `PREFIX`: the value starts with the term, case as typed (ids: a whole id is its own prefix).
      Index: btree with `varchar_pattern_ops` (Django adds one for every unique `CharField`).
    - `PREFIX_ANY_CASE`: `lower(value)` starts with the lowered term (e-mails, usernames).
      Index: btree on `lower(column)` with `text_pattern_ops`.
    - `CONTAINS`: `lower(value)` contains the lowered term, from 3 characters (names, URLs); a
      shorter term matches from the start. Index: GIN on `lower(column)` with `gin_trgm_ops`.
    """

    path: str
    label: str
    how: str = PREFIX

    def condition(self, term: str) -> Q:
        """The rows whose field matches `term`, as a condition on the searched model."""
        if self.how == PREFIX:
            return Q(**{f"{self.path}__startswith": term})
        if self.how == CONTAINS and len(term) >= TRIGRAM_MINIMUM:
            return Q(Contains(Lower(self.path), term.lower()))
        return Q(StartsWith(Lower(self.path), term.lower()))

    @property
    def help(self) -> str:
        if self.how == CONTAINS:
            return f"{self.label} (contains, any case)"
        return f"{self.label} ({'starts with' if self.how == PREFIX else 'starts with, any case'})"


def indexed_search(model, queryset: QuerySet, term: str, fields: tuple[SearchField, ...]) -> QuerySet:
    """The rows of `queryset` where any of `fields` matches the whole `term` (spaces included: staff
    paste one value): one branch per field (core.fastpath.branches), each read in the list's order
    and stopping at the page's end, so a term that matches a tenth of a million-row table (`ch_1`)
    reads a page's worth of rows as a narrow one does; PostgreSQL reads a narrow term from the
    field's index and a broad one along the list's order. Each row is listed once."""
    term = term.strip()
    if not term:
        return queryset
    return queryset.filter(AnyBranch([field.condition(term) for field in fields]))


class AutocompleteListFilter(admin.ListFilter):
    """A sidebar filter on a foreign key whose choices come from the admin's autocomplete view (the
    related model's admin search), so the page never lists the related table. Made by
    `autocomplete_filter(path)`; the query parameter is Django's own (`team__id__exact`), so links
    made for the stock related-field filter keep working."""

    template = "admin/autocomplete_filter.html"
    field_path = ""

    def __init__(self, request, params, model, model_admin):
        self.field = get_fields_from_path(model, self.field_path)[-1]
        self.remote_model = self.field.remote_field.model
        if self.title is None:
            self.title = self.field.verbose_name
        super().__init__(request, params, model, model_admin)
        self.admin_site = model_admin.admin_site
        self.parameter_name = f"{self.field_path}__{self.remote_model._meta.pk.name}__exact"
        values = params.pop(self.parameter_name, None)
        raw = values[-1] if isinstance(values, list) else values
        self.value = None
        if raw not in (None, ""):
            try:
                self.value = self.remote_model._meta.pk.to_python(raw)
            except Exception as error:  # a malformed id is the admin's "bad lookup", not a 500
                raise IncorrectLookupParameters(error) from error

    def has_output(self) -> bool:
        return True

    def expected_parameters(self) -> list[str]:
        return [self.parameter_name]

    def queryset(self, request, queryset):
        if self.value is None:
            return queryset
        return queryset.filter(**{self.parameter_name: self.value})

    def choices(self, changelist):
        yield {
            "selected": self.value is None,
            "query_string": changelist.get_query_string(remove=[self.parameter_name]),
            "display": "All",
        }

    def select_html(self) -> str:
        """The select box, with only the chosen row (if any) as an option: one lookup by id."""
        choice = forms.ModelChoiceField(
            queryset=self.remote_model._default_manager.all(),
            required=False,
            widget=AutocompleteSelect(self.field, self.admin_site, attrs={"class": "autocomplete-filter"}),
        )
        element_id = f"autocomplete-filter-{self.parameter_name}"
        return choice.widget.render(self.parameter_name, self.value, attrs={"id": element_id, "style": "width: 100%"})

    @classmethod
    def media(cls, admin_site) -> forms.Media:
        field = forms.Media(js=["core/admin/autocomplete_filter.js"])
        # The widget's media does not depend on the field: any foreign key will do.
        return AutocompleteSelect(None, admin_site).media + field


def autocomplete_filter(path: str, title: str | None = None) -> type[AutocompleteListFilter]:
    """A list filter on the foreign key at `path` (e.g. "team", "booking__organizer")."""
    return type(f"AutocompleteFilter_{path}", (AutocompleteListFilter,), {"field_path": path, "title": title})


class IndexedValuesFilter(admin.SimpleListFilter):
    """The distinct values of an indexed column, read with a skip scan of its index (one index probe
    per value) instead of `SELECT DISTINCT` over the table. For columns with few values (currencies)."""

    column = ""

    def lookups(self, request, model_admin):
        model = model_admin.model
        quote = connections[model._default_manager.db].ops.quote_name
        table, column = quote(model._meta.db_table), quote(model._meta.get_field(self.column).column)
        sql = (
            f"WITH RECURSIVE skip(value) AS ("
            f" (SELECT {column} FROM {table} WHERE {column} IS NOT NULL ORDER BY {column} LIMIT 1)"
            f" UNION ALL SELECT (SELECT {column} FROM {table} WHERE {column} > skip.value ORDER BY {column} LIMIT 1)"
            f" FROM skip WHERE skip.value IS NOT NULL"
            f") SELECT value FROM skip WHERE value IS NOT NULL"
        )
        with connections[model._default_manager.db].cursor() as cursor:
            cursor.execute(sql)
            return [(value, value) for (value,) in cursor.fetchall()]

    def queryset(self, request, queryset):
        if self.value():
            return queryset.filter(**{self.column: self.value()})
        return queryset


def indexed_values_filter(column: str, title: str | None = None) -> type[IndexedValuesFilter]:
    attributes = {"column": column, "title": title or column, "parameter_name": f"{column}__exact"}
    return type(f"IndexedValuesFilter_{column}", (IndexedValuesFilter,), attributes)


class ScaledAdminMixin:
    """For a ModelAdmin whose table may hold millions of rows (see the module's docstring).

    Declare `search_by` (a tuple of `SearchField`) instead of `search_fields`; use
    `autocomplete_filter(path)` in `list_filter` for a foreign key to a large table."""

    paginator = EstimatedCountPaginator
    show_full_result_count = False
    show_facets = admin.ShowFacets.NEVER
    change_list_template = "admin/scaled_change_list.html"
    search_by: tuple[SearchField, ...] = ()

    def __init__(self, model, admin_site):
        super().__init__(model, admin_site)
        if self.search_by:
            self.search_fields = tuple(field.path for field in self.search_by)

    @property
    def search_help_text(self) -> str | None:
        if not self.search_by:
            return None
        return "Finds one value pasted whole or its beginning, in: " + "; ".join(f.help for f in self.search_by) + "."

    def get_search_results(self, request, queryset, search_term):
        if not self.search_by:
            return super().get_search_results(request, queryset, search_term)
        return indexed_search(self.model, queryset, search_term, self.search_by), False

    def lookup_allowed(self, lookup, value, request=None):
        # Django allows a lookup across two relations only for a list_filter named by its path; an
        # autocomplete filter is a class, so its own parameter is allowed here.
        for spec in self.list_filter:
            if isinstance(spec, type) and issubclass(spec, AutocompleteListFilter):
                remote = get_fields_from_path(self.model, spec.field_path)[-1].remote_field.model
                if lookup == f"{spec.field_path}__{remote._meta.pk.name}__exact":
                    return True
        return super().lookup_allowed(lookup, value, request)

    @property
    def media(self):
        media = super().media
        if any(isinstance(spec, type) and issubclass(spec, AutocompleteListFilter) for spec in self.list_filter):
            media += AutocompleteListFilter.media(self.admin_site)
        return media
