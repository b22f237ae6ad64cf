"""What the tests share and that holds no tests: the paths they read, the CLI run in process, builders of
Kubernetes objects and node archives, the port-forward rig, the headless browser, the PowerShell grammar,
finding the real tools, waiting on events. Test modules are tests/test_*.py; fixtures are in tests/conftest.py
and the servers in tests/apiserver, tests/realcluster and tests/registry."""
