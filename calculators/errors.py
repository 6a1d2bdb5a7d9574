"""Errors raised by the calculators.

    CalculatorError (ValueError)
    ├── ConfigError          a model config.json lacks a field or holds an unusable value
    ├── QuantizationError    a quantization method or format the calculators do not know
    └── InputError           a number outside its domain (negative, zero, utilization > 1 …)

Every message names the field or option and what was expected, so a caller can show it as-is.
"""


class CalculatorError(ValueError):
    """Base class of every error the calculators raise."""


class ConfigError(CalculatorError):
    """A model configuration is missing a field or holds an unusable value."""


class QuantizationError(CalculatorError):
    """A quantization method, or a combination of it with a model, is not supported."""


class InputError(CalculatorError):
    """A numeric input is outside its domain."""
