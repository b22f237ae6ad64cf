"""A test API server that real kubectl and the kubernetes Python client accept.

    from tests.apiserver import ApiServer
    with ApiServer() as server:
        server.store.put({...})                  # or server.seed("dir/")
        kubeconfig = server.write_kubeconfig()
        server.faults.status("^/api/v1/pods", 429, count=2)
        server.auth.deny("list", "events")

See docs/test-apiserver.md.
"""

from tests.apiserver.auth import Auth
from tests.apiserver.faults import FaultInjector, FaultRule
from tests.apiserver.server import DEFAULT_TOKEN, ApiServer, ExecContext
from tests.apiserver.store import Store, StoreError

__all__ = ["ApiServer", "Auth", "DEFAULT_TOKEN", "ExecContext", "FaultInjector", "FaultRule", "Store", "StoreError"]
