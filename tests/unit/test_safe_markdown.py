"""safe_markdown: whatever a model or a tool writes, the rendered Markdown fetches nothing remote.

Each source goes through ``safe_markdown`` and then through the Markdown parsers that really draw it:
JupyterLab's marked (labextension/node_modules, run by node, set up as JupyterLab sets it up) and mistune
(nbconvert's). The HTML they make is read back: only a short list of tags and attributes, every image
local, everything inside the wrapper that MathJax skips.
"""

from __future__ import annotations

import json
import random
import re
import shutil
import subprocess
from html import unescape
from html.parser import HTMLParser
from pathlib import Path

import mistune
import pytest

from codemode_kernel.views.markdown import NO_TEX_CLASS, is_local_image, safe_markdown

ROOT = Path(__file__).resolve().parents[2]
RENDER_MARKED = Path(__file__).with_name("render_marked.mjs")
EVIL = "evil.example"

_TAGS = {
    "div", "p", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "a", "em", "strong", "del", "code",
    "pre", "blockquote", "table", "thead", "tbody", "tr", "th", "td", "hr", "br", "img", "input",
}  # fmt: skip
_ATTRIBUTES = {
    "a": {"href", "title"},
    "img": {"src", "alt", "title"},
    "div": {"class"},
    "code": {"class"},
    "ol": {"start"},
    "th": {"align", "style"},
    "td": {"align", "style"},
    "input": {"type", "checked", "disabled", "class"},
    "li": {"class"},  # mistune's task lists
}

HOSTILE = [
    f"![x](http://{EVIL}/a.png)",
    f"![x](HTTPS://{EVIL}/a.png)",
    f"![x](HtTp://{EVIL}/a.png)",
    f"![x](//{EVIL}/a.png)",
    f"![x](/\\{EVIL}/a.png)",
    f"![x](\\\\{EVIL}/a.png)",
    f"![x](<http://{EVIL}/a b.png>)",
    f'![x](http://{EVIL}/a.png "title")',
    f"![x](h&#116;tp://{EVIL}/a.png)",
    f"![x](&#104;ttp://{EVIL}/a.png)",
    f"![x](%68ttp://{EVIL}/a.png)",
    f"![x](javascript:fetch('http://{EVIL}'))",
    f"![x](data:text/html,<img src=http://{EVIL}/>)",
    "![x](data:image/svg+xml;base64,PHN2Zz48aW1hZ2UgaHJlZj0iaHR0cDovL2V2aWwuZXhhbXBsZSIvPjwvc3ZnPg==)",
    f"![a][r]\n\n[r]: http://{EVIL}/x.png",
    f"![r]\n\n[r]: http://{EVIL}/x.png",
    f"![r][]\n\n[r]: <http://{EVIL}/x.png>",
    f"![a][R]\n\n[r]: //{EVIL}/x.png 'title'",
    f"\\![x](http://{EVIL}/a.png)",
    f"\\\\![x](http://{EVIL}/a.png)",
    f"!\\[x](http://{EVIL}/a.png)",
    f"[![x](http://{EVIL}/a.png)](http://{EVIL}/)",
    f"![![x](http://{EVIL}/a.png)](ok.png)",
    f"![x](ok.png)(http://{EVIL}/a.png)",
    f"![x](ok.png http://{EVIL}/a.png)",
    f"![x](ok.png\n'http://{EVIL}/a.png')",
    f"![x\n](http://{EVIL}/a.png)",
    f"<img src=http://{EVIL}/x>",
    f'<IMG SRC="http://{EVIL}/x" onerror=alert(1)>',
    f'<picture><source srcset="http://{EVIL}/x"><img src=ok.png></picture>',
    f'<img src=ok.png srcset="http://{EVIL}/x 2x">',
    f'<p style="background:url(http://{EVIL}/x)">a</p>',
    f"<div style=\"background-image: url('//{EVIL}/x')\">\n\ntext\n\n</div>",
    f"<video poster=http://{EVIL}/x></video>",
    f'<svg><image href="http://{EVIL}/x"/></svg>',
    f"<link rel=stylesheet href=http://{EVIL}/x.css>",
    f"<style>@import url(http://{EVIL}/x)</style>",
    f"<!-- c --><img src=http://{EVIL}/x>",
    f"<iframe src=http://{EVIL}/></iframe>",
    f"<object data=http://{EVIL}/></object>",
    f"<input type=image src=http://{EVIL}/x>",
    f"<table background=http://{EVIL}/x><tr><td>a</td></tr></table>",
    f"<http://{EVIL}/x> and <//{EVIL}/x> and http://{EVIL}/x",
    f"&lt;img src=http://{EVIL}/x&gt; &#60;img src=http://{EVIL}/x&#62;",
    f"\\`<img src=http://{EVIL}/x>`",
    f"``a`<img src=http://{EVIL}/x>`b``",
    f"`a\n\n<img src=http://{EVIL}/x>\n\nb`",
    f"- a\n  ```\n<img src=http://{EVIL}/x>\n```",
    f"> ```\n<img src=http://{EVIL}/x>\n```",
    f"```\n```` \n<img src=http://{EVIL}/x>",
    f"~~~\nx\n~~~~\n<img src=http://{EVIL}/x>",
    f"````\n```\n<img src=http://{EVIL}/x>\n````\n<img src=http://{EVIL}/y>",
    f"```x`y\n<img src=http://{EVIL}/x>\n```",
    f"    ```\n<img src=http://{EVIL}/x>",
    f'```mermaid\nflowchart LR\nA@{{ img: "http://{EVIL}/x.png", label: "a" }}\n```',
    f"| a |\n|---|\n| <img src=http://{EVIL}/x> |\n| ![x](http://{EVIL}/y) |",
    f"$\\style{{background:url(http://{EVIL}/x)}}{{a}}$ and $$\\bbox[background:url(//{EVIL}/y)]{{b}}$$",
    f"Setext\n===\n<img src=http://{EVIL}/x>",
    f"* [ ] task <img src=http://{EVIL}/x>",
    f"[link](http://{EVIL}/) ![x](ok.png) <b>bold</b>\r\n<img src=http://{EVIL}/x>",
]

_FRAGMENTS = [
    "![", "[", "]", "(", ")", "<", ">", "`", "``", "```", "~~~", "\\", "\n", "\n\n", " ", "    ", "- ", "> ",
    "http://evil.example/x", "//evil.example/x", "ok.png", "img src=", '"', "'", "&#104;", "[r]: ", "$", "|",
    "picture", "srcset=", "style=url(", "!", "*", "_", "1. ", "<img src=http://evil.example/z>",
]  # fmt: skip


def fuzz_corpus(count: int, seed: int = 7) -> list[str]:
    """Random sequences of Markdown's active characters, URLs and tags (the same ones on every run)."""
    rng = random.Random(seed)
    return ["".join(rng.choice(_FRAGMENTS) for _ in range(rng.randint(1, 40))) for _ in range(count)]


def render_marked(sources: list[str]) -> list[str]:
    """HTML from JupyterLab's marked, one per source (one node process for all)."""
    node = shutil.which("node")
    assert node, "node is needed to run JupyterLab's marked (install Node.js 20)"
    assert (ROOT / "labextension/node_modules/marked").is_dir(), (
        "labextension/node_modules/marked is missing: run `jlpm install` in labextension/"
    )
    done = subprocess.run(
        [node, str(RENDER_MARKED)], input=json.dumps(sources), capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return list(json.loads(done.stdout))


def render_mistune(source: str) -> str:
    """HTML from mistune as nbconvert uses it (raw HTML passed through)."""
    markdown = mistune.create_markdown(escape=False, plugins=["strikethrough", "table", "url", "task_lists"])
    return str(markdown(source))


class _Reader(HTMLParser):
    """Every element and attribute of an HTML fragment; what is outside the first element."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str]]] = []
        self.depth = 0
        self.outside: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.depth == 0 and self.elements:
            self.outside.append(tag)
        self.elements.append((tag, {name: value or "" for name, value in attrs}))
        if tag not in ("img", "br", "hr", "input"):
            self.depth += 1

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, {name: value or "" for name, value in attrs}))

    def handle_endtag(self, tag: str) -> None:
        if tag not in ("img", "br", "hr", "input"):
            self.depth -= 1

    def handle_data(self, data: str) -> None:
        if self.depth == 0 and data.strip():
            self.outside.append(data.strip())


def fetches(html: str) -> list[str]:
    """What in ``html`` could make a browser fetch, or escapes the no-TeX wrapper; [] when nothing."""
    reader = _Reader()
    reader.feed(html)
    reader.close()
    problems = [f"outside the wrapper: {item!r}" for item in reader.outside]
    if not reader.elements or reader.elements[0] != ("div", {"class": NO_TEX_CLASS}):
        problems.append(f"not wrapped in the no-TeX div: {reader.elements[:1]}")
    for tag, attrs in reader.elements:
        if tag not in _TAGS:
            problems.append(f"tag <{tag}>")
            continue
        for name, value in attrs.items():
            if name not in _ATTRIBUTES.get(tag, set()):
                problems.append(f"<{tag} {name}={value!r}>")
        if tag == "img" and not is_local_image(attrs.get("src", "")):
            problems.append(f"image {attrs.get('src')!r}")
        if tag == "code" and attrs.get("class", "language-python").startswith("language-mermaid"):
            problems.append("a mermaid block")
        if tag == "div" and attrs.get("class") != NO_TEX_CLASS:
            problems.append(f"div {attrs}")
        if tag in ("th", "td") and attrs.get("style", "text-align: left").split(":")[0] != "text-align":
            problems.append(f"<{tag} style={attrs['style']!r}>")
    return problems


def test_hostile_sources_fetch_nothing_in_jupyterlabs_marked() -> None:
    """Each attack, written as a model would, renders in JupyterLab's marked without a fetch or markup."""
    rendered = render_marked([safe_markdown(source) for source in HOSTILE])
    failures = {source: fetches(html) for source, html in zip(HOSTILE, rendered, strict=True)}
    assert {source: problems for source, problems in failures.items() if problems} == {}


def test_the_old_escaping_let_raw_html_and_remote_images_through() -> None:
    """The check above sees the attacks: unescaped, they fetch (and one runs script) in marked."""
    rendered = render_marked([f"\\`<img src=x onerror=alert(1)>` ![a](http://{EVIL}/x.png)"])
    assert "<img src=x onerror=alert(1)>" in rendered[0]
    assert fetches(rendered[0])


def test_hostile_sources_fetch_nothing_in_mistune() -> None:
    """nbconvert's parser (HTML export) reads the same text without a fetch or markup."""
    failures = {source: fetches(render_mistune(safe_markdown(source))) for source in HOSTILE}
    assert {source: problems for source, problems in failures.items() if problems} == {}


def test_random_markdown_fetches_nothing() -> None:
    """Two thousand random mixes of Markdown's active characters, URLs and tags, through both parsers."""
    corpus = fuzz_corpus(2000)
    safe = [safe_markdown(source) for source in corpus]
    for source, html in zip(corpus, render_marked(safe), strict=True):
        assert fetches(html) == [], source
    for source, text in zip(corpus, safe, strict=True):
        assert fetches(render_mistune(text)) == [], source


def test_remote_images_become_links_to_the_same_address() -> None:
    html = render_marked([safe_markdown(f"See ![the chart](https://{EVIL}/c.png?q=1&s=2).")])[0]
    assert f'<a href="https://{EVIL}/c.png?q=1&amp;s=2">the chart</a>' in html
    assert "<img" not in html


def test_reference_style_images_become_links() -> None:
    html = render_marked([safe_markdown(f"![chart][c]\n\n[c]: http://{EVIL}/c.png")])[0]
    assert f'<a href="http://{EVIL}/c.png">chart</a>' in html
    assert "<img" not in html


@pytest.mark.parametrize(
    "address",
    ["plot.png", "out/plot%201.png", "/files/plot.png", "data:image/png;base64,iVBORw0KGgo="],
)
def test_local_and_data_images_stay(address: str) -> None:
    html = render_marked([safe_markdown(f"Here: ![the plot]({address})")])[0]
    assert f'<img src="{address}" alt="the plot">' in html


def test_formatting_and_code_render_as_written() -> None:
    """Emphasis, lists, tables and links render; code shows ``<``, backticks and ``$`` as written."""
    source = (
        "**Miami** is _warmest_: use `a < b` and `` `x` ``, or <div>.\n\n"
        "1. first\n2. [docs](https://example.org/docs)\n\n"
        "| city | °C |\n|---|---|\n| Oslo | 6.1 |\n\n"
        '```Python\nif a < b and "<img src=x>":\n    print("$5")\n```\n'
    )
    html = render_marked([safe_markdown(source)])[0]
    assert "<strong>Miami</strong>" in html and "<em>warmest</em>" in html
    assert [unescape(code) for code in re.findall(r"<code>(.*?)</code>", html)] == ["a < b", "`x`"]
    assert "or &lt;div&gt;." in html
    assert '<li><a href="https://example.org/docs">docs</a></li>' in html
    assert "<td>Oslo</td>" in html
    assert '<code class="language-python">if a &lt; b and &quot;&lt;img src=x&gt;&quot;:' in html
    assert "print(&quot;$5&quot;)" in html


def test_a_fence_inside_a_list_keeps_its_code() -> None:
    source = "1. Install:\n   ```bash\n   pip install x<2\n   ```\n2. Run it."
    html = render_marked([safe_markdown(source)])[0]
    assert '<code class="language-bash">pip install x&lt;2\n</code>' in html
    assert "Run it." in html


def test_languages_a_frontend_draws_itself_are_dropped() -> None:
    text = safe_markdown("```mermaid\ngraph TD\n```")
    assert "```\ngraph TD\n```" in text and "mermaid" not in text


@pytest.mark.parametrize(
    ("address", "local"),
    [
        ("a.png", True),
        ("/files/a.png", True),
        ("data:image/webp;base64,AAAA", True),
        ("//evil.example/a.png", False),
        ("/\\evil.example/a.png", False),
        ("http://evil.example/a.png", False),
        ("HTTP://evil.example/a.png", False),
        ("a.png?x=1", False),
        ("data:image/svg+xml;base64,AAAA", False),
        ("data:image/png,raw", False),
        ("a&#46;png", False),
        (" a.png", False),
    ],
)
def test_is_local_image(address: str, local: bool) -> None:
    assert is_local_image(address) is local
