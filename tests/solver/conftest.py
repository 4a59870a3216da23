"""Shared positions for the solver tests."""
