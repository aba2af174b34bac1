"""Read-only facts of a Fabric that more than one consumer needs (checks, outputs, explain, verify).

Each module is a pure function of the Fabric (and the blueprint for intent), computed once and
shared: hosts and their placement, racks, cages, GUIDs, addresses, per-switch facts, node labels,
the acceptance plan, the bill of materials and the ratio measures.
"""
