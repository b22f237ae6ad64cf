"""`kubectl win port-forward`: local listeners, one exec websocket per connection, an in-pod relay.

ports (pure parsing) -> targets (pod, container, numeric ports) -> probe (a relay per container)
-> transport (the exec websocket) -> listener + forwarder (accepting, pumping, clean-up).
"""
