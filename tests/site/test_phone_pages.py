"""At a phone's width, the answer, catalog, model, compare and result pages scroll their tables
inside their box, never the page sideways (a GPU page's price table once made the page 562 px
wide at 390); Home, which has no table, neither."""

from typing import Any

from site_helpers import PHONE, visit


def test_phone_pages_scroll_tables_in_their_box_not_the_page(phone: Any, site_url: str) -> None:
    # 00088088a8e5: a result page whose provenance holds a long source URL (its table made the
    # page 598 px wide at 390 before it sat in the scroll box)
    for path in ("answer/balanced-chat/", "gpus/mi300x/", "gpus/h100-sxm/",
                 "models/llama-3.1-8b-instruct/", "compare/gpt-j-6b--custom/",
                 "results/00088088a8e5/"):  # fmt: skip
        visit(phone, f"{site_url}/{path}")
        assert phone.locator("table").count() > 0, path
        width = phone.evaluate("document.documentElement.scrollWidth")
        assert width <= PHONE["width"], f"{path}: the page is {width} px wide"
    # Home (no table: a model picker, the presets and the model list) neither
    visit(phone, f"{site_url}/")
    assert phone.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
