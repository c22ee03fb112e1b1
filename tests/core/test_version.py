"""jax.version: pyjax's version, and JAX's rules for the version string of a source
tree and of a build (JAX 0.10.2's jax.version, which reads the values set on it)."""
import datetime
import subprocess
from unittest import mock

import pytest

import pyjax
import pyjax.version as version

TODAY = datetime.date.today().strftime("%Y%m%d")


def test_the_package_version():
    assert pyjax.version.__version__ == pyjax.__version__ == "0.1.0"
    assert pyjax.__version_info__ == (0, 1, 0)
    assert version._version_as_tuple("0.4.16.dev20230906") == (0, 4, 16)
    assert version._minimum_jaxlib_version_info == (0, 10, 2)


@pytest.fixture
def unreleased(monkeypatch):
    monkeypatch.setattr(version, "_version", "1.2.3")
    monkeypatch.setattr(version, "_release_version", None)
    for name in ("WHEEL_VERSION_SUFFIX", "JAX_RELEASE", "JAXLIB_RELEASE", "JAX_NIGHTLY",
                 "JAXLIB_NIGHTLY", "JAX_CUSTOM_VERSION_SUFFIX"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def _git_says(stdout):
    popen = mock.patch.object(subprocess, "Popen")
    started = popen.start()
    started.return_value.communicate.return_value = (stdout, b"")
    return popen


def test_a_release_version_is_used_as_it_is(monkeypatch):
    monkeypatch.setattr(version, "_release_version", "1.2.3.dev4567")
    with mock.patch.object(subprocess, "Popen") as popen:
        assert version._get_version_string() == "1.2.3.dev4567"
        assert version._get_version_for_build() == "1.2.3.dev4567"
    popen.assert_not_called()


def test_source_tree_versions(unreleased):
    popen = _git_says(b"1731412800-1c0f1076e")
    try:
        assert version._get_version_string() == "1.2.3.dev20241112+1c0f1076e"
        unreleased.setenv("JAX_CUSTOM_VERSION_SUFFIX", "test")
        assert version._get_version_for_build() == "1.2.3.dev20241112+1c0f1076e.test"
    finally:
        popen.stop()
    popen = _git_says(None)   # no git output: today's date
    try:
        assert version._get_version_string() == f"1.2.3.dev{TODAY}"
    finally:
        popen.stop()


@pytest.mark.parametrize("env, expected, prerelease", [
    ({"JAX_NIGHTLY": "1"}, f"1.2.3.dev{TODAY}", False),
    ({"JAXLIB_RELEASE": "1"}, "1.2.3", False),
    ({"JAXLIB_NIGHTLY": "1", "WHEEL_VERSION_SUFFIX": ".dev20250101+1c0f1076erc1"},
     "1.2.3.dev20250101+1c0f1076erc1", False),
    ({"JAX_RELEASE": "1", "WHEEL_VERSION_SUFFIX": "rc0"}, "1.2.3rc0", True),
])
def test_build_versions(unreleased, env, expected, prerelease):
    for name, value in env.items():
        unreleased.setenv(name, value)
    with mock.patch.object(subprocess, "Popen") as popen:
        assert version._get_version_for_build() == expected
    popen.assert_not_called()
    assert version._is_prerelease() == prerelease
