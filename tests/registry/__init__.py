"""The reference container registry for the tests of `kubectl win images` (built from Go modules by
tests/realcluster/build.py, component "registry"), a token service for it, and fault stand-ins."""
