"""EXPLAIN helpers of the query-plan tests: capture the SELECTs a request runs, plan each one, and
find the sequential scans of the tables that must be read through an index."""

import json

from django.db import connection


def sequential_scans(node: dict, tables: set[str]) -> list[str]:
    """Each sequential scan of one of `tables` in the plan, with its filter."""
    found = []
    if node.get("Node Type") == "Seq Scan" and node["Relation Name"] in tables:
        found.append(f"{node['Relation Name']} (filter: {node.get('Filter', 'none')}, rows {node['Plan Rows']})")
    for child in node.get("Plans", []):
        found += sequential_scans(child, tables)
    return found


def index_conditions(node: dict, table: str) -> list[str]:
    """The index conditions by which the plan reads `table` (one per index scan of it)."""
    found = [node["Index Cond"]] if node.get("Relation Name") == table and "Index Cond" in node else []
    for child in node.get("Plans", []):
        found += index_conditions(child, table)
    return found


def outline(node: dict, depth: int = 0) -> str:
    """The plan as one line per node: type, relation, index."""
    line = "  " * depth + " ".join(
        str(part) for part in (node["Node Type"], node.get("Relation Name", ""), node.get("Index Name", "")) if part
    )
    return "\n".join([line, *(outline(child, depth + 1) for child in node.get("Plans", []))])


def captured_reads(run) -> list[tuple[str, tuple]]:
    """The statements `run()` executes that read (SELECT, a UNION of parenthesised SELECTs, or
    WITH … which may also delete)."""
    captured = []

    def capture(execute, sql, params, many, context):
        captured.append((sql, params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(capture):
        run()
    return [(sql, params) for sql, params in captured if sql.lstrip().upper().startswith(("SELECT", "WITH", "("))]


def queries_of(client, url: str, **headers) -> list[tuple[str, tuple]]:
    """The reads of one GET, which must answer 200."""
    responses = []
    found = captured_reads(lambda: responses.append(client.get(url, **headers)))
    assert responses[0].status_code == 200, f"{url} answered {responses[0].status_code}"
    return found


def plan_of(sql: str, params) -> dict:
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN (FORMAT JSON) {sql}", params)
        plan = cursor.fetchone()[0]
    return (json.loads(plan) if isinstance(plan, str) else plan)[0]["Plan"]


def prefer_ssd_costs() -> None:
    """Index pages cost what they cost on SSD storage (PostgreSQL's advice for it; the default of 4
    is for spinning disks). It moves the table size from which the planner prefers an index down to
    what seeds in seconds; a query that no index can serve is a scan at any setting."""
    with connection.cursor() as cursor:
        cursor.execute("SET random_page_cost = 1.1")


def rows_read(sql: str, params, table: str) -> tuple[int, dict]:
    """The rows of `table` that running the statement read (each scan's rows kept and removed by
    its filter or recheck, times its loops), by EXPLAIN ANALYZE; and the plan."""
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN (ANALYZE, FORMAT JSON) {sql}", params)
        plan = cursor.fetchone()[0]
    return _rows_of(plan, table)


def generic_rows_read(sql: str, params, table: str) -> tuple[int, dict]:
    """As `rows_read`, under the statement's generic plan: the one plan PostgreSQL keeps for a
    prepared statement whatever its values, planned without them. psycopg prepares the app's
    statements (config/settings.py, `DB_PREPARE_THRESHOLD`), and PostgreSQL runs that plan from a
    prepared statement's sixth execution on when it costs it no dearer than the plans made for
    each execution's values: an organizer is then any organizer, of a few dozen bookings."""
    if not params:
        return rows_read(sql, params, table)
    with connection.cursor() as cursor:
        cursor.cursor.execute(sql, params, prepare=True)  # psycopg's prepared statement, the app's types
        numbered = sql % tuple(f"${number}" for number in range(1, len(params) + 1))
        cursor.execute("SELECT name FROM pg_prepared_statements WHERE statement = %s", [numbered])
        (name,) = cursor.fetchone()
        values = connection.ops.compose_sql(", ".join(["%s"] * len(params)), params)
        cursor.execute("SET plan_cache_mode = force_generic_plan")
        try:
            cursor.execute(f"EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE {name}({values})")
            plan = cursor.fetchone()[0]
        finally:
            cursor.execute("RESET plan_cache_mode")
    return _rows_of(plan, table)


def _rows_of(plan, table: str) -> tuple[int, dict]:
    root = (json.loads(plan) if isinstance(plan, str) else plan)[0]["Plan"]

    def read(node: dict) -> int:
        own = 0
        if node.get("Relation Name") == table:
            kept = node.get("Actual Rows", 0) + node.get("Rows Removed by Filter", 0)
            own = (kept + node.get("Rows Removed by Index Recheck", 0)) * node.get("Actual Loops", 1)
        return own + sum(read(child) for child in node.get("Plans", []))

    return read(root), root
