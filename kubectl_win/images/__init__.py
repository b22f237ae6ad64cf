"""`kubectl win images`: whether images run on Windows node builds, read from the registries themselves."""
