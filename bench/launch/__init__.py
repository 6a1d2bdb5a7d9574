"""The server under test: launched by the bench, or found at an endpoint.

`server` launches `vllm serve` and stops it, `server_log` copies its output with secrets
redacted, `vllm_log` reads its startup figures or why it failed, `multinode` spreads it over a
Ray cluster's nodes, `parallel_fit` checks the model splits over its GPUs before it loads;
`engines` asks an endpoint which server answers, `served` says what a result may state about a
server it did not launch.
"""
