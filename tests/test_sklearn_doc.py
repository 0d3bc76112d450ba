"""docs/sklearn.md runs as written: every ```python block, in order, in one namespace."""
import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[1] / "docs" / "sklearn.md"


def test_every_code_block_of_the_scikit_learn_page_runs():
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)
    assert len(blocks) == 4
    namespace = {}
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), namespace)  # noqa: S102 - the page's own examples
    assert len(namespace["budget"].spent) == 5 and namespace["search"].best_estimator_ is not None
