"""The tracing core (level 2): avals, primitives and traces, the jaxpr IR. Knows no
particular primitive; imports only level 0-1 modules."""
