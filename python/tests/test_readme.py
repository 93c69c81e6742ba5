"""The README's "Use from PyTorch" example, run as written."""

import os
import re
from pathlib import Path

import pytest

from test_gpu import REASON


def readme_example():
    here = Path(__file__).resolve()
    candidates = [os.environ.get("BATON_README", "")] + [str(p / "README.md") for p in here.parents]
    for c in candidates:
        if c and Path(c).is_file() and "## Use from PyTorch" in Path(c).read_text():
            text = Path(c).read_text()
            break
    else:
        pytest.fail("no README.md with a 'Use from PyTorch' section above " + str(here))
    section = text.split("## Use from PyTorch", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 1, "the section has one python example"
    return blocks[0]


def test_readme_example_compiles():
    compile(readme_example(), "README.md", "exec")


@pytest.mark.skipif(REASON is not None, reason=f"SKIPPED: {REASON}")
def test_readme_example_runs():
    exec(compile(readme_example(), "README.md", "exec"), {})
