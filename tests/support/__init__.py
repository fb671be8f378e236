"""Helpers shared by the test suite (paths, stand-in servers, fixtures' plumbing)."""
