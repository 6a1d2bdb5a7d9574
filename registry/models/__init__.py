"""pydantic models of every persisted registry file: the one source of truth of their format.

`result` holds the result file, built from `identity`, `measurements` and `provenance`;
`catalog` holds the GPU, model and price catalogs; `common` the constrained types they share.

Each submodule names its public models in its own `__all__`; this facade republishes them
(PEP 8's one use of a wildcard import: "to republish an internal interface as part of a public
API"), so a new model is listed once, beside its definition.
"""

from infermeter.registry.models import catalog, common, identity, measurements, provenance, result
from infermeter.registry.models.catalog import *
from infermeter.registry.models.common import *
from infermeter.registry.models.identity import *
from infermeter.registry.models.measurements import *
from infermeter.registry.models.provenance import *
from infermeter.registry.models.result import *

__all__ = [
    *catalog.__all__,
    *common.__all__,
    *identity.__all__,
    *measurements.__all__,
    *provenance.__all__,
    *result.__all__,
]
