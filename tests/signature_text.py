"""A function's call signature as comparable text: Python's own rendering without
annotations, with every default that is not a literal written as its type's name in angle
brackets, so that JAX's recorded signatures and pyjax's compare as strings. Private
parameters (a leading underscore, like JAX's `einsum(_dot_general=)`) are not API and are
left out."""
import inspect


class _Default:
    def __init__(self, value):
        if isinstance(value, (bool, int, float, str, type(None))):
            self.text = repr(value)
        elif isinstance(value, type):
            self.text = value.__name__
        else:
            self.text = f"<{type(value).__name__}>"

    def __repr__(self):
        return self.text


def signature_text(fn) -> str:
    sig = inspect.signature(fn)
    params = [p.replace(annotation=p.empty,
                        default=p.default if p.default is p.empty else _Default(p.default))
              for p in sig.parameters.values() if not p.name.startswith("_")]
    return str(sig.replace(parameters=params, return_annotation=sig.empty))
