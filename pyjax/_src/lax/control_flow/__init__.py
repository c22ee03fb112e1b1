"""Structured control flow: higher-order primitives (cond, while, scan) whose params are
closed jaxprs traced once per call site, and the public lax wrappers built on them."""
from pyjax._src.lax.control_flow.associative import associative_scan
from pyjax._src.lax.control_flow.conditionals import cond, cond_p, switch
from pyjax._src.lax.control_flow.fori import fori_loop
from pyjax._src.lax.control_flow.loops import while_loop, while_p
from pyjax._src.lax.control_flow.scan import map, scan, scan_p

__all__ = ["associative_scan", "cond", "cond_p", "switch", "fori_loop", "while_loop",
           "while_p", "map", "scan", "scan_p"]
