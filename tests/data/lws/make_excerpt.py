r"""Write the LeaderWorkerSet CRD excerpt the tests validate against (see README.md here).

    git -C LWS_CLONE show v0.9.0:config/crd/bases/leaderworkerset.x-k8s.io_leaderworkersets.yaml \
        | python tests/data/lws/make_excerpt.py \
        > tests/data/lws/leaderworkerset-crd-v0.9.0.excerpt.yaml

Everything of the CRD's v1 schema is kept as it is, except the two pod specs (the leader's and
the worker's template `spec`, each the whole core v1 PodSpec): they become an object that keeps
unknown fields, and the tests check them with kubernetes-validate instead.
"""

from __future__ import annotations

import copy
import sys
from typing import Any

import yaml

HEADER = """\
# Excerpt of the LeaderWorkerSet CRD: its v1 schema (spec.versions[0].schema.openAPIV3Schema).
#
# Source: https://github.com/kubernetes-sigs/lws (Apache-2.0)
#   path:   config/crd/bases/leaderworkerset.x-k8s.io_leaderworkersets.yaml
#   tag:    v0.9.0, commit f056f611ae7721f9983ac35f26bfbae8547fd9f3 (2026-06-17)
#
# Verbatim except leaderTemplate.spec and workerTemplate.spec, each the whole core v1 PodSpec
# (about 310 KB apiece): here an object that keeps unknown fields, because the tests check
# both pod templates with kubernetes-validate as core v1 PodTemplates. Made by make_excerpt.py.
"""

ELIDED = {
    "description": "Elided in this excerpt: the core v1 PodSpec, checked by kubernetes-validate.",
    "type": "object",
    "x-kubernetes-preserve-unknown-fields": True,
}


def excerpt(crd: dict[str, Any]) -> dict[str, Any]:
    """The CRD with its one version's schema, the two pod specs elided."""
    (version,) = crd["spec"]["versions"]
    schema = copy.deepcopy(version["schema"]["openAPIV3Schema"])
    template = schema["properties"]["spec"]["properties"]["leaderWorkerTemplate"]["properties"]
    for name in ("leaderTemplate", "workerTemplate"):
        template[name]["properties"]["spec"] = dict(ELIDED)
    spec = {key: crd["spec"][key] for key in ("group", "names", "scope")}
    spec["versions"] = [
        {
            "name": version["name"],
            "served": version["served"],
            "storage": version["storage"],
            "schema": {"openAPIV3Schema": schema},
        }
    ]
    return {
        "apiVersion": crd["apiVersion"],
        "kind": crd["kind"],
        "metadata": {"name": crd["metadata"]["name"]},
        "spec": spec,
    }


if __name__ == "__main__":
    document = excerpt(yaml.safe_load(sys.stdin))
    sys.stdout.write(HEADER + yaml.safe_dump(document, sort_keys=True, width=100))
