"""A step that imports a module names its file: an older view of that file is linked (its outline kept)."""

from __future__ import annotations

from tests.selectors.test_select import MODULE as CART_VIEW

from contextweaver.config import WeaverConfig
from contextweaver.nodes.modules import module_files
from contextweaver.records import Step
from contextweaver.weaver import ContextWeaver

MODULE = CART_VIEW.replace("import os", "VERSION = 1", 1)
"""The cart view without its import line: the control script's `import os` must not reach it by words."""


def test_import_lines_name_files() -> None:
    said = "create t.py --file_text 'import os\nfrom shop.cart import Cart\n  import org.shop.Order;\nimport json"
    assert module_files(said) == {
        *("shop/cart.py", "shop/cart/__init__.py", "shop/cart.java"),
        *("org/shop/Order.py", "org/shop/Order/__init__.py", "org/shop/Order.java"),
    }
    assert module_files("the important part") == frozenset()


def test_a_script_that_imports_a_module_links_an_older_view_of_its_file() -> None:
    def decision(script: str) -> tuple[str, str]:
        weaver = ContextWeaver(WeaverConfig(selector="select", mode="per_step"))
        weaver.begin([{"role": "system", "content": "sys"}, {"role": "user", "content": "fix it"}])
        weaver.add_step(Step("read the cart", "cat /testbed/src/shop/cart.py", MODULE))
        for i in range(14):
            weaver.add_step(Step(f"look {i}", f"ls dir{i}", f"file_{i}.txt"))
        weaver.add_step(
            Step("write a test", f"str_replace_editor create /testbed/t.py --file_text '{script}'", "")
        )
        context = weaver.context()
        found = next(d for d in context.decisions if d.index == 1)
        return found.mode + ": " + found.reason, context.text()

    why, text = decision("import os\nfrom shop.cart import Cart\nprint(1)")
    assert why.startswith("trimmed") and "shop/cart.py, a file recent steps name" in why, why
    assert "    def add_item(self, sku):" in text and "value_30 = 30" not in text
    assert decision("import os\nfrom billing.order import Order\nprint(1)")[0].startswith("compressed")
