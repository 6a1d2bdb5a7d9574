"""Benchmark plans: the options of `bench run` as one typed object, for one run or a matrix.

`RunOptions` (`options`) holds every option of one `bench run` (the command builds it from its
flags); `bench.session.session.builder.session_config` turns it into the `SessionConfig` that
`bench.session.session.session.run_session` runs.
A plan file (`bench run --plan FILE.yaml`, `file`) lists many runs, each a mapping whose keys are
the option names without their dashes (`model`, `profile`, `concurrency`, `request-rate`,
`input-len`, `slo-ttft-ms`, `max-model-len`, `vllm-arg`, `output`, …; snake_case is accepted
too), plus an optional `name`; optional `defaults:` hold keys every run starts from:

    defaults: {model: meta-llama/Llama-3.1-8B-Instruct, max-model-len: 32768, gpu: h100-sxm}
    runs:
      - {name: chat, profile: chat, concurrency: [1, 4, 16, 64], output: results/chat.json}
      - {name: rag, profile: rag, concurrency: [1, 4, 16], output: results/rag.json}

`load_plan` checks the whole file before anything runs, and raises `PlanError` carrying every
problem as `FILE: runs[2].concurrency[0]: message`. Paths in a plan (output, dataset,
tokenizer) are relative to the current folder, as on the command line; two runs may not write
the same result file. Each run's provenance records the equivalent single `bench run` command.

A run (or `defaults:`) may also say `gpus:`, the GPU kinds a fleet runs it on
(`gpus: [h100-sxm, mi300x:2]`, `placement`); one host's `--plan` ignores it. `report` says what
a plan's runs came to.
"""
