"""Pure-Python calculators: model architecture, vLLM memory plan, cost and GPU fit.

Standard library only, no I/O: this package is imported by the CLI, by the registry's
validation and index, and in the browser through Pyodide with nothing else loaded.
"""
