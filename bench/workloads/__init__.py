"""What a run sends: prompts, lengths, profiles, datasets, multi-turn sessions and traces.

`prompts` synthesizes a workload's requests (reproducible from the seed), `lengths` is the one
length syntax, `profiles` the built-in traffic profiles, `dataset` prompts from files (ShareGPT)
and the tokenizer, `conversation` multi-turn sessions, `trace`, `trace_plan` and `trace_replay`
published traces replayed, `identity` the workload as the result states it.
"""
