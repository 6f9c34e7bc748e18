"""What the library under test was built with, as ctest passes it (tests/CMakeLists.txt)."""
import os

# The head dim of the CPU tests' calls: 64, or the first head dim of a FLASH_HEAD_DIMS subset
# without it (the dev preset's 128), so that their valid calls stay valid in any build.
HEAD_DIM = int(os.environ.get("FLASH_TEST_HEAD_DIM", "64"))
