"""One `bench run` from start to finish: launch vLLM (or use an endpoint), measure, write.

`session` runs it (`run_session`), `config` is what it takes and gives (`SessionConfig`),
`builder` makes that config from a run's options, `lines` are what it tells on the way,
`point_observer` watches each load point (telemetry, the launched server's health), and
`interrupts` makes Ctrl-C and SIGTERM stop the measuring but never the writing.
"""
