"""Helpers the tests import: plain functions and classes (fixtures stay in the conftest files)."""
