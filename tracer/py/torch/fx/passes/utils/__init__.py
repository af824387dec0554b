"""Helpers shared by passes."""
