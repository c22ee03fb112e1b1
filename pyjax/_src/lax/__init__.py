"""lax (level 5): the primitives, one file per family, each primitive defined with all its
rules in one `define_primitive` call, and the strict lax wrappers that bind them."""
