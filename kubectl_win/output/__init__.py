"""Renderers shared by every command: pure functions from data to text on a stream."""
