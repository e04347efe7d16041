"""optimistic-o2nc: online-to-nonconvex conversion with a doubly optimistic hint (ODOG), oracle-complexity study."""
