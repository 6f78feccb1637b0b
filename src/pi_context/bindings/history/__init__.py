"""Durable session history for the model: windows, items, search and reads over a branch.

``items`` projects branch entries into windows and items, ``query`` filters, searches, pages
and reads them within the output budget, and ``tools`` exposes the four model-facing tools.
"""

from .items import ROLES, History, Item, Window, project_history

__all__ = ["ROLES", "History", "Item", "Window", "project_history"]
