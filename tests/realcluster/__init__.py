"""A real kube-apiserver and etcd, built from Go modules, for end-to-end tests.

    python -m tests.realcluster build --version 1.37        # build (or find cached) binaries
    python -m tests.realcluster up --version 1.37 --dir DIR  # run until SIGINT/SIGTERM
"""

from tests.realcluster.build import KUBERNETES_MINORS, BuildError
from tests.realcluster.cluster import RealCluster, StartError

__all__ = ["KUBERNETES_MINORS", "BuildError", "RealCluster", "StartError"]
