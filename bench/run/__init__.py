"""Measuring the load points of a run: `bench run` as a library call.

`runner` takes one `RunConfig` (`config`) and gives one `RunResult`; `point_plans` are the points
of a sweep, `point_loop` measures them in turn, `load` generates one point's load (closed or open
loop), `workers` splits a point over client processes, `search` finds the highest load that
meets an SLO. From the records: `metrics` and `distribution` (a point's figures),
`point_summary` (what they are judged by), `timeline` (second by second), `request_figures`,
`interrupted` (the point under way when a run was stopped). `hooks` and `progress` follow a run
as it goes; `summary` is the text `bench run` prints.
"""
