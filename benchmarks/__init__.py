"""`make bench`: the API measured side by side with its framework floors (docs/benchmarks.md).

Nothing here is imported by the service itself; the floors are mounted only by
`config.settings_bench` (ROOT_URLCONF = `benchmarks.urls`).
"""
