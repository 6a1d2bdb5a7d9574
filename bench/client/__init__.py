"""Talking to the server: the async streaming client of OpenAI-compatible endpoints.

`client` sends the requests and fills their records (`request_record`: `PromptRequest`,
`RequestRecord`), `transport` is the HTTP/1.1 client whose socket reads the kernel times,
`stream` parses a streamed response's server-sent events, `extra_body` the `--extra-body`
fields, `small_get` reads a server's small answers (its version, model cards, metrics) within a
time and size limit.
"""
