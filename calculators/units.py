"""The factors between units, each written once: the client measures in nanoseconds, results
state milliseconds and seconds, and prices are quoted per hour."""

NS_PER_S = 1_000_000_000
MS_PER_S = 1000.0
SECONDS_PER_HOUR = 3600.0
