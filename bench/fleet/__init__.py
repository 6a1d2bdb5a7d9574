"""A benchmark plan over a fleet of GPU hosts, spread by engines that exist already.

infermeter never schedules anything itself: it expands a plan into a matrix (`matrix`), and
hands the entries to Ray (`ray_runner`), or renders them for GitHub Actions on self-hosted
runners (`github_actions`) or Kubernetes Jobs (`kubernetes`; a LeaderWorkerSet, `lws`, for
an entry served over several hosts; both built from `pods`). The results come back as files
that `collect` validates together, each with its own host's provenance.

Hierarchy (beside bench.errors)::

    BenchError
    └── FleetError            the fleet cannot run or render (engine missing, cluster unusable)
"""

from infermeter.bench.errors import BenchError


class FleetError(BenchError):
    """The fleet cannot run as asked: the engine is missing or the cluster cannot take it."""
