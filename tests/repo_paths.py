"""Where the repository's parts are, for tests that start a fresh interpreter on this
checkout or read recorded data: found here once, so a test file's folder does not matter."""
import pathlib

TESTS_DIR = pathlib.Path(__file__).resolve().parent
REPO_ROOT = TESTS_DIR.parent
DATA_DIR = TESTS_DIR / "data"
