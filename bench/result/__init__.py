"""The result file of a run, and what is made from result files.

`assemble` builds, validates and writes a run's result (through `registry.builder`),
`points` is a load point as the file states it, `deployment` and `deployment_plan` the identity
beyond the workload, `provenance` who measured and with which code, `model_entry` the catalog
entry a new model needs, `output` writes what was measured whatever fails, `partial` the result
so far after each point, `raw_records` every request beside it. From results: `report` (the
buyer's table of a run), `compare` (results side by side), `html_report` (one HTML page).
"""
