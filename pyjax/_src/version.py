"""pyjax's version (pyjax.__version__, and the module jax.version), here so that
pyjax/_src reads it without importing the public package. The functions are JAX's
jax.version: the version string of a source tree (its git commit, or today's date) and
of a build (from JAX's build environment variables). pyjax has no build step that
stamps a release version into its sources, so its sources are its release: the version
is pyproject.toml's, and reading it runs no git command."""
from __future__ import annotations

import datetime
import os
import subprocess

_version = "0.1.0"
_release_version: str | None = _version
_git_hash: str | None = None


def _get_version_string() -> str:
    """The release version when there is one; else the base version with the wheel
    suffix, the last git commit's date and hash, or today's date."""
    if _release_version is not None:
        return _release_version
    if os.getenv("WHEEL_VERSION_SUFFIX"):
        return _version + os.getenv("WHEEL_VERSION_SUFFIX", "")
    return _version_from_git_tree(_version) or _version_from_todays_date(_version)


def _version_from_todays_date(base_version: str) -> str:
    return f"{base_version}.dev{datetime.date.today().strftime('%Y%m%d')}"


def _version_from_git_tree(base_version: str) -> str | None:
    """`base_version.devYYYYMMDD+hash` of the sources' last git commit (with
    JAX_CUSTOM_VERSION_SUFFIX appended), or None outside a git checkout."""
    try:
        process = subprocess.Popen(["git", "show", "-s", "--format=%at-%h", "HEAD"],
                                   cwd=os.path.dirname(os.path.realpath(__file__)),
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        stdout, _ = process.communicate()
        timestamp, commit_hash = stdout.decode().strip().split("-", 1)
        datestring = datetime.date.fromtimestamp(int(timestamp)).strftime("%Y%m%d")
    except Exception:   # noqa: BLE001 - no git, no checkout, unexpected output: no version
        return None
    if not (datestring.isnumeric() and commit_hash.isalnum()):
        return None
    version = f"{base_version}.dev{datestring}+{commit_hash}"
    suffix = os.environ.get("JAX_CUSTOM_VERSION_SUFFIX")
    return f"{version}.{suffix}" if suffix else version


def _get_version_for_build() -> str:
    """The version a build gets, as JAX's build computes it: the release version; else
    the base version with WHEEL_VERSION_SUFFIX; the bare base version for a release
    (JAX_RELEASE or JAXLIB_RELEASE); with today's date for a nightly (JAX_NIGHTLY or
    JAXLIB_NIGHTLY); else from the git tree."""
    if _release_version is not None:
        return _release_version
    if os.getenv("WHEEL_VERSION_SUFFIX"):
        return _version + os.getenv("WHEEL_VERSION_SUFFIX", "")
    if os.getenv("JAX_RELEASE") or os.getenv("JAXLIB_RELEASE"):
        return _version
    if os.getenv("JAX_NIGHTLY") or os.getenv("JAXLIB_NIGHTLY"):
        return _version_from_todays_date(_version)
    return _version_from_git_tree(_version) or _version_from_todays_date(_version)


def _is_prerelease() -> bool:
    """Whether this is a pre-release ("rc") build."""
    return os.getenv("WHEEL_VERSION_SUFFIX", "").startswith("rc")


def _version_as_tuple(version_str: str) -> tuple[int, ...]:
    return tuple(int(i) for i in version_str.split(".") if i.isdigit())


__version__ = _get_version_string()
__version_info__ = _version_as_tuple(__version__)
_minimum_jaxlib_version = "0.10.2"   # pyproject.toml pins jaxlib==0.10.2
_minimum_jaxlib_version_info = _version_as_tuple(_minimum_jaxlib_version)
