"""Nodes in a store: finding what is stored at a path (:mod:`.discover`) and creating
arrays and groups (:mod:`.create`)."""
