"""Nodes in a store: what arrays and groups share (:mod:`.node`: paths, writing metadata,
the legacy formats' read-only rules, store URLs), finding what is stored at a path
(:mod:`.discover`) and creating arrays and groups (:mod:`.create`)."""
