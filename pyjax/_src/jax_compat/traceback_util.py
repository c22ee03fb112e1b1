"""jax._src.traceback_util: the files whose frames are not the user's (a library that
wraps jax registers its own), and the decorator marking API entry points. pyjax filters
tracebacks at its own entry points only (pyjax._src.traceback_util), leaving a library's
frames in place, so `api_boundary` returns the function as it is; registered files are
skipped when staged equations record their source location."""
from pyjax._src.interpreters.partial_eval import register_exclusion as _exclude_from_sources

_exclude_paths: list = []


def register_exclusion(path: str) -> None:
    _exclude_paths.append(path)
    _exclude_from_sources(path)


def include_frame(frame) -> bool:
    """Whether a traceback frame belongs to the user (not to a registered library file)."""
    return not frame.f_code.co_filename.startswith(tuple(_exclude_paths))


def api_boundary(fun=None, **kwargs):
    if fun is None:
        return api_boundary
    return fun
